"""Every route of ``gemwire serve`` described for its OpenAPI document (`openapi`):
`OPERATIONS`, by (method, path as Starlette spells it)."""

from __future__ import annotations

from gemwire.serve_api import (
    Cancelled,
    ConfigBody,
    Health,
    ModeBody,
    ModelBody,
    NewSession,
    PermissionAnswer,
    PermissionAnswered,
    PromptBody,
    Prompted,
    Ready,
    Roots,
    Sessions,
    SessionView,
)
from gemwire.server.batches import BatchView
from gemwire.server.openapi_acp import acp_operations
from gemwire.server.openapi_shapes import (
    ACP_AGENT,
    ACP_AGENT_QUERY,
    AFTER,
    AGENTS,
    BATCH,
    LIMIT,
    PROJECT,
    REF,
    SEQ_SCHEMA,
    SESSION,
    SINCE,
    SSE,
    SSE_SCHEMA,
    UNTIL,
    Batches,
    EventEnvelopes,
    Operation,
    Param,
    SavedSearch,
    choice,
    ref,
    sse_envelope,
)
from gemwire.server.routes_batches import BatchRequest, TaskRows
from gemwire.server.routes_eval import EvalReportView
from gemwire.server.routes_saved import SavedSessions
from gemwire.sessions import GROUPINGS, UsageReport

__all__ = ("OPERATIONS",)


_ENVELOPES = {
    "type": "object",
    "properties": {
        "events": {
            "type": "array",
            "items": {"anyOf": [ref("EventEnvelope"), ref("StateEnvelope")]},
        },
        "last_seq": {"type": "integer"},
    },
    "required": ["events", "last_seq"],
}


OPERATIONS: dict[tuple[str, str], Operation] = {
    ("GET", "/health"): Operation(
        "Liveness", response=Health, public=True, description="Needs no token."
    ),
    ("GET", "/ready"): Operation(
        "Readiness",
        "`ready` once the state folder is there and the managers run; 503 while shutting down. "
        "`degraded`: the sessions out of service (a log that could not be written or was "
        "found damaged).",
        response=Ready,
        errors=(503,),
        public=True,
    ),
    ("GET", "/openapi.json"): Operation(
        "This document",
        response={"application/json": {"type": "object"}},
    ),
    ("GET", "/"): Operation(
        "The web page (docs/web.md)",
        "`/?token=T` sets the `gemwire_session_PORT` cookie (derived from the token, bound to "
        "the server's port; HttpOnly, SameSite=Strict) and redirects "
        "(303) to `/`. Served with a strict Content-Security-Policy (`default-src 'self'`).",
        params=(Param("token", "The server's token, once: it becomes the cookie."),),
        response={"text/html": {"type": "string"}},
        errors=(401,),
        tag="page",
    ),
    ("GET", "/static/{name}"): Operation(
        "A file of the web page (its ES modules, stylesheet and icon)",
        params=(Param("name", "The file's path under the page's folder.", where="path"),),
        response={"text/javascript": {"type": "string"}, "text/css": {"type": "string"}},
        errors=(401, 404),
        tag="page",
    ),
    ("GET", "/favicon.ico"): Operation(
        "The page's icon (SVG)", response={"image/svg+xml": {"type": "string"}}, tag="page"
    ),
    ("GET", "/v1/agents"): Operation(
        "The agents the server runs",
        "Built-in agents (available or not, and why) and each `--agent NAME=COMMAND`.",
        response={"application/json": {"type": "array", "items": ref("AgentEntry")}},
        tag="sessions",
    ),
    ("GET", "/v1/roots"): Operation(
        "The folders workspaces must lie under", response=Roots, tag="sessions"
    ),
    ("POST", "/v1/sessions"): Operation(
        "Start a session",
        "An agent in a workspace under a root (default: the first root). With `continue`, "
        "the agent's saved session of that id is continued (`session/resume` where the agent "
        "offers it, else `session/load`, whose replayed history is logged with `replay: true`); "
        "409 when the agent can do neither. `mode` runs the session in that mode of the "
        "agent's (set before it is answered, and again whenever it is continued, a restarted "
        "server's too), in place of the mode that asks before acting, which a session is "
        "otherwise put in unless its `permissions` are `all`; 400 for a mode the agent "
        "refuses. An agent gemwire does not know the modes of is refused (400, kind "
        "`permissions_unenforceable`) unless the session has a `mode` or `permissions` `all`.",
        body=NewSession,
        status=201,
        response=SessionView,
        errors=(400, 404, 409, 413, 429),
        tag="sessions",
    ),
    ("GET", "/v1/sessions"): Operation(
        "List sessions",
        "Live ones and those kept in the state folder.",
        response=Sessions,
        tag="sessions",
    ),
    ("GET", "/v1/sessions/{session_id}"): Operation(
        "A session", params=(SESSION,), response=SessionView, errors=(404,), tag="sessions"
    ),
    ("DELETE", "/v1/sessions/{session_id}"): Operation(
        "Close a session",
        "Stops its agent; its log stays (status `closed`).",
        params=(SESSION,),
        response=SessionView,
        errors=(404,),
        tag="sessions",
    ),
    ("POST", "/v1/sessions/{session_id}/prompt"): Operation(
        "Prompt",
        "Starts a turn (a stopped session is continued first); its events follow `after` on "
        "the session's stream. 409 while a turn runs.",
        params=(SESSION,),
        body=PromptBody,
        status=202,
        response=Prompted,
        errors=(400, 404, 409, 413),
        tag="sessions",
    ),
    ("POST", "/v1/sessions/{session_id}/cancel"): Operation(
        "Cancel the running turn",
        "It ends with its `turn_completed` (stop reason `cancelled`). 409 with no turn.",
        params=(SESSION,),
        status=202,
        response=Cancelled,
        errors=(404, 409),
        tag="sessions",
    ),
    ("POST", "/v1/sessions/{session_id}/permissions/{request_id}"): Operation(
        "Answer a permission request",
        "`option_id` one the agent offered (`null`: deny); `permission_resolved` follows.",
        params=(SESSION, Param("request_id", "The request's id.", where="path")),
        body=PermissionAnswer,
        response=PermissionAnswered,
        errors=(400, 404, 409),
        tag="sessions",
    ),
    ("POST", "/v1/sessions/{session_id}/mode"): Operation(
        "Set the session's mode",
        params=(SESSION,),
        body=ModeBody,
        response=SessionView,
        errors=(400, 404, 409),
        tag="sessions",
    ),
    ("POST", "/v1/sessions/{session_id}/model"): Operation(
        "Set the session's model",
        params=(SESSION,),
        body=ModelBody,
        response=SessionView,
        errors=(400, 404, 409),
        tag="sessions",
    ),
    ("POST", "/v1/sessions/{session_id}/config"): Operation(
        "Set one of the session's config options",
        params=(SESSION,),
        body=ConfigBody,
        response=SessionView,
        errors=(400, 404, 409),
        tag="sessions",
    ),
    ("GET", "/v1/sessions/{session_id}/events"): Operation(
        "The session's events",
        "Server-Sent Events of envelopes (`EventEnvelope`, and `StateEnvelope` for server "
        "state): every one logged after `after`, then live, with no gap and no duplicate. "
        "With `Accept: application/json`: the logged envelopes, no follow.",
        params=(SESSION, AFTER, LIMIT),
        response={SSE: SSE_SCHEMA, "application/json": _ENVELOPES},
        errors=(400, 404),
        tag="sessions",
        extra={"x-envelope": {"anyOf": [ref("EventEnvelope"), ref("StateEnvelope")]}},
    ),
    ("GET", "/v1/sessions/{session_id}/ws"): Operation(
        "The session over a WebSocket",
        "An upgrade. The server sends envelopes as text frames (after `after`); the client "
        'may send `{"op": "prompt", "text"}`, `{"op": "permission", "request_id", '
        '"option_id"}` or `{"op": "cancel"}`, each answered with `{"reply": op, "ok", '
        '"error"?}`. Refused (1008) before it is accepted for a wrong token, Origin or '
        "session; closed with 1001 at shutdown, 1009 for a message over 64 MiB.",
        params=(SESSION, AFTER),
        status=101,
        errors=(404,),
        tag="sessions",
    ),
    ("GET", "/v1/saved-sessions"): Operation(
        "List saved sessions",
        "Each object is a line of `gemwire sessions list --json`; every project's, or "
        "`project`'s; sessions last updated within `since`..`until`; newest first (last "
        "updated, else started). A page of them with `limit` and `offset` (`total`: how many "
        "match); without `limit`, all. `agents` and `projects` are the choices of `agent` "
        "and `project`. A `since` after `until` is a 400.",
        params=(
            AGENTS,
            PROJECT,
            SINCE,
            UNTIL,
            Param("q", "Sessions whose id, summary or first prompt holds this (any case)."),
            Param("limit", "At most this many sessions (default: every one).", SEQ_SCHEMA),
            Param("offset", "Skip this many newer ones first (default 0).", SEQ_SCHEMA),
        ),
        response=SavedSessions,
        errors=(400,),
        tag="saved sessions",
    ),
    ("GET", "/v1/saved-sessions/search"): Operation(
        "Search saved sessions",
        "The sessions whose prompts, answers, tool inputs or tool outputs hold `text` "
        "(literally, in any case), each a line of `gemwire sessions search --json`: each "
        "agent's newest first, up to `limit`; sessions active within `since`..`until` (a "
        "`since` after `until` is a 400).",
        params=(
            Param("text", "What to look for (required; never a pattern)."),
            AGENTS,
            PROJECT,
            SINCE,
            UNTIL,
            Param("limit", "At most this many sessions (1 to 200, default 200).", SEQ_SCHEMA),
        ),
        response=SavedSearch,
        errors=(400,),
        tag="saved sessions",
    ),
    ("GET", "/v1/saved-sessions/{agent}/{session_id}"): Operation(
        "Read a saved session",
        "By the id the listing gives (never a path). `events`: the normalized events; `json`: "
        "the session and its Claude-compatible messages; `markdown` or `html`: a transcript "
        "(html with a strict Content-Security-Policy).",
        params=(
            Param("agent", "The agent whose session it is.", where="path"),
            Param("session_id", "The session's id, as listed.", where="path"),
            Param(
                "format",
                "The form of the answer (default `events`).",
                choice(("events", "json", "markdown", "html")),
            ),
            PROJECT,
        ),
        response={
            "application/json": {
                "oneOf": [{"$ref": REF.format(name=n)} for n in ("SavedEvents", "SavedMessages")]
            },
            "text/markdown": {"type": "string"},
            "text/html": {"type": "string"},
        },
        errors=(400, 404, 422),
        tag="saved sessions",
    ),
    ("GET", "/v1/usage"): Operation(
        "Usage of the saved sessions",
        "The report of `gemwire usage --json`: tokens and estimated cost (a `since` after "
        "`until` is a 400).",
        params=(
            AGENTS,
            SINCE,
            UNTIL,
            PROJECT,
            Param("by", "One row per (default `day`).", choice(GROUPINGS)),
        ),
        response=UsageReport,
        errors=(400,),
        tag="saved sessions",
    ),
    ("POST", "/v1/batches"): Operation(
        "Start a batch, or open an output folder",
        "Tasks (a file under a root, or the task objects) through an agent into an output "
        "folder under a root; or `open`, an existing output folder, read-only (200 when that "
        "folder's batch is known already; its tasks: `GET /v1/batches/{batch_id}/tasks`).",
        body=BatchRequest,
        status=201,
        response=BatchView,
        errors=(400, 403, 404, 409, 413),
        tag="batches",
    ),
    ("GET", "/v1/batches"): Operation("List batches", response=Batches, tag="batches"),
    ("GET", "/v1/batches/{batch_id}"): Operation(
        "A batch and its progress",
        params=(BATCH,),
        response=BatchView,
        errors=(404,),
        tag="batches",
    ),
    ("GET", "/v1/batches/{batch_id}/events"): Operation(
        "A batch's progress",
        "Server-Sent Events of progress envelopes: every one after `after`, then each new one "
        "while the batch runs. With `Accept: application/json`, the envelopes so far.",
        params=(BATCH, AFTER, LIMIT),
        response={
            SSE: SSE_SCHEMA,
            "application/json": {"$ref": REF.format(name="ProgressEnvelopes")},
        },
        errors=(400, 404),
        tag="batches",
        extra=sse_envelope("ProgressEnvelope"),
    ),
    ("POST", "/v1/batches/{batch_id}/retry-failed"): Operation(
        "Run again what failed or did not finish",
        params=(BATCH,),
        status=202,
        response=BatchView,
        errors=(404, 409),
        tag="batches",
    ),
    ("GET", "/v1/batches/{batch_id}/tasks"): Operation(
        "A batch's tasks",
        "Each task in the batch's order with its status (`done`, `failed`, `running`, "
        "`pending`) and, once it has a result, its attempts, error kind and duration. A folder "
        "opened read-only lists the tasks of its `results.jsonl`, then those with only an "
        "events file (`unfinished`).",
        params=(BATCH,),
        response=TaskRows,
        errors=(404,),
        tag="batches",
    ),
    ("GET", "/v1/batches/{batch_id}/tasks/{task_id}/events"): Operation(
        "A task's events",
        "The task's events file (while it runs, what it wrote so far), `seq` its line number.",
        params=(BATCH, Param("task_id", "The task's id.", where="path"), AFTER, LIMIT),
        response=EventEnvelopes,
        errors=(400, 404, 422),
        tag="batches",
    ),
    ("GET", "/v1/batches/{batch_id}/report"): Operation(
        "An eval's report",
        "For a batch whose output folder is an eval's: `gemwire eval report --json`'s "
        "`agents` and `tasks`, each agent's pass rate with its 95 % Wilson interval, and every "
        "attempt's verdict. A batch that is not an eval: `is_eval` false, the rest empty.",
        params=(BATCH,),
        response=EvalReportView,
        errors=(404, 422),
        tag="batches",
    ),
    **acp_operations(
        "/acp",
        ACP_AGENT_QUERY,
        "An ACP agent (`?agent=`): a WebSocket, or a Streamable HTTP stream",
    ),
    **acp_operations(
        "/acp/{agent}", ACP_AGENT, "An ACP agent: a WebSocket, or a Streamable HTTP stream"
    ),
}
"""Every route of the app, by (method, path as Starlette spells it)."""
