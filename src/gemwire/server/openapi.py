"""The OpenAPI 3.1 document of ``gemwire serve``, served at ``GET /openapi.json`` and kept as
docs/openapi.json.

It is built from the app's routes and the description of each in `OPERATIONS` (its
parameters, request and response schemas); the schemas come from the types the routes
encode (msgspec), the events' from the same `gemwire.events.Event` that
docs/events.schema.json is made of. A route without a description is listed by
`undescribed` (tests/unit/server/test_openapi.py fails on it), and so is a description whose
route is gone. Regenerate the committed file with::

    python -c "from gemwire.server.openapi import main; main()" > docs/openapi.json
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec
from starlette.requests import Request
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute

from gemwire.batch import Progress
from gemwire.events import Event
from gemwire.server.agents import AgentEntry
from gemwire.server.batches import BatchView
from gemwire.server.envelopes import EventEnvelope, StateEnvelope
from gemwire.server.responses import JsonResponse
from gemwire.server.routes_batches import BatchRequest, TaskRows
from gemwire.server.routes_saved import SavedSessions
from gemwire.server.routes_sessions import (
    ConfigBody,
    ModeBody,
    ModelBody,
    NewSession,
    PermissionAnswer,
    PromptBody,
)
from gemwire.server.sessions import SessionView
from gemwire.sessions import GROUPINGS, SearchHit, SessionInfo, UsageReport

__all__ = ("OPERATIONS", "ROUTES", "Operation", "Param", "openapi_document", "undescribed")

REF = "#/components/schemas/{name}"


# ---- The shapes the routes answer with, named for the document. -------------------------
class ErrorDetail(msgspec.Struct, frozen=True):
    kind: str
    """``not_found``, ``bad_request``, ``conflict``, ``unauthorized``, ``forbidden``,
    ``too_large``, ``limit``, or a `gemwire.errors` kind."""
    message: str


class ErrorBody(msgspec.Struct, frozen=True):
    """Every error: its HTTP status, and this."""

    error: ErrorDetail


class Health(msgspec.Struct, frozen=True):
    status: Literal["ok"]
    version: str


class Ready(msgspec.Struct, frozen=True):
    ready: bool


class ProgressEnvelope(msgspec.Struct, frozen=True):
    """One progress report of a batch (a line of ``gemwire batch --json``)."""

    seq: int
    progress: Progress


class EventEnvelopes(msgspec.Struct, frozen=True):
    events: list[EventEnvelope]
    last_seq: int


class ProgressEnvelopes(msgspec.Struct, frozen=True):
    events: list[ProgressEnvelope]
    last_seq: int


class SavedSearchHit(SearchHit, frozen=True, kw_only=True):
    """A session holding the text: a line of ``gemwire sessions search --json``."""

    open: str
    """The command that exports the session as a page."""


class SavedSearch(msgspec.Struct, frozen=True):
    hits: list[SavedSearchHit]
    more: bool
    """Whether the search found more than ``limit`` sessions (narrow it to see them)."""
    unread: dict[str, str]
    """What of the agents' homes could not be read, path -> why: not searched."""


class SavedEvents(msgspec.Struct, frozen=True):
    events: list[Event]


class SavedMessages(msgspec.Struct, frozen=True):
    session: SessionInfo
    messages: list[dict[str, Any]]
    """Claude-compatible messages (``gemwire sessions export --format claude``)."""


class Batches(msgspec.Struct, frozen=True):
    batches: list[BatchView]


class Roots(msgspec.Struct, frozen=True):
    roots: list[str]


class Sessions(msgspec.Struct, frozen=True):
    sessions: list[SessionView]


class Prompted(msgspec.Struct, frozen=True):
    after: int
    """The last seq before the turn: read the stream with ``?after=`` this."""


class Cancelled(msgspec.Struct, frozen=True):
    cancelled: bool


class PermissionAnswered(msgspec.Struct, frozen=True):
    request_id: str
    option_id: str | None


# ---- Declarations. ---------------------------------------------------------------------
@dataclass(frozen=True)
class Param:
    """A query parameter (``where="query"``) or a path parameter (``where="path"``)."""

    name: str
    description: str
    schema: dict[str, Any] = field(default_factory=lambda: {"type": "string"})
    where: Literal["query", "path", "header"] = "query"


@dataclass(frozen=True)
class Operation:
    """One route and method as the document describes it. ``response`` is a type (JSON),
    or ``{media type: schema}``; ``errors`` the statuses it may answer with an `ErrorBody`."""

    summary: str
    description: str = ""
    params: tuple[Param, ...] = ()
    body: Any = None
    status: int = 200
    response: Any = None
    errors: tuple[int, ...] = ()
    public: bool = False
    tag: str = "server"
    extra: dict[str, Any] = field(default_factory=dict)


def _choice(values: Sequence[str]) -> dict[str, Any]:
    return {"type": "string", "enum": list(values)}


_SEQ = {"type": "integer", "minimum": 0}
_AFTER = Param("after", "Only what comes after this sequence number (also `Last-Event-ID`).", _SEQ)
_LIMIT = Param("limit", "At most this many (1 to 1000, default 1000).", _SEQ)
_AGENTS = Param("agent", "Whose saved sessions: an agent's name, or `all` (default).")
_SINCE = Param("since", "From this day or moment: `2026-11-01`, `today`, `7d`, `12h`, ISO time.")
_UNTIL = Param("until", "Until this day or moment, as `since`.")
_PROJECT = Param("project", "Only this project (its root folder).")
_BATCH = Param("batch_id", "The batch's id (`b_` and 16 hex digits).", where="path")
_SESSION = Param("session_id", "The server's session id (`s_` and 16 hex digits).", where="path")
_ACP_AGENT = Param("agent", "The agent: a built-in one or an `--agent` one.", where="path")
_ACP_AGENT_QUERY = Param(
    "agent", "The agent: a built-in one or an `--agent` one (default `gemini`).", where="query"
)
_ACP_CONNECTION = Param(
    "Acp-Connection-Id", "The connection (the answer to `initialize` names it).", where="header"
)
_ACP_SESSION = Param(
    "Acp-Session-Id", "The session the message is on, or whose stream to read.", where="header"
)
_ACP_MESSAGE = {
    "type": "object",
    "description": "One JSON-RPC 2.0 message of the Agent Client Protocol, passed as it is.",
}
_SSE = "text/event-stream"
_SSE_SCHEMA = {"type": "string", "description": "`id: N`, `event: gemwire`, `data: <envelope>`"}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": REF.format(name=name)}


def _sse(envelope: str) -> dict[str, Any]:
    return {"x-envelope": _ref(envelope)}


_ENVELOPES = {
    "type": "object",
    "properties": {
        "events": {
            "type": "array",
            "items": {"anyOf": [_ref("EventEnvelope"), _ref("StateEnvelope")]},
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
        "`ready` once the state folder is there and the managers run; 503 while shutting down.",
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
        "`/?token=T` sets the `gemwire_token` cookie (HttpOnly, SameSite=Strict) and redirects "
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
        response={"application/json": {"type": "array", "items": _ref("AgentEntry")}},
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
        "409 when the agent can do neither.",
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
        "A session", params=(_SESSION,), response=SessionView, errors=(404,), tag="sessions"
    ),
    ("DELETE", "/v1/sessions/{session_id}"): Operation(
        "Close a session",
        "Stops its agent; its log stays (status `closed`).",
        params=(_SESSION,),
        response=SessionView,
        errors=(404,),
        tag="sessions",
    ),
    ("POST", "/v1/sessions/{session_id}/prompt"): Operation(
        "Prompt",
        "Starts a turn (a stopped session is continued first); its events follow `after` on "
        "the session's stream. 409 while a turn runs.",
        params=(_SESSION,),
        body=PromptBody,
        status=202,
        response=Prompted,
        errors=(400, 404, 409, 413),
        tag="sessions",
    ),
    ("POST", "/v1/sessions/{session_id}/cancel"): Operation(
        "Cancel the running turn",
        "It ends with its `turn_completed` (stop reason `cancelled`). 409 with no turn.",
        params=(_SESSION,),
        status=202,
        response=Cancelled,
        errors=(404, 409),
        tag="sessions",
    ),
    ("POST", "/v1/sessions/{session_id}/permissions/{request_id}"): Operation(
        "Answer a permission request",
        "`option_id` one the agent offered (`null`: deny); `permission_resolved` follows.",
        params=(_SESSION, Param("request_id", "The request's id.", where="path")),
        body=PermissionAnswer,
        response=PermissionAnswered,
        errors=(400, 404, 409),
        tag="sessions",
    ),
    ("POST", "/v1/sessions/{session_id}/mode"): Operation(
        "Set the session's mode",
        params=(_SESSION,),
        body=ModeBody,
        response=SessionView,
        errors=(400, 404, 409),
        tag="sessions",
    ),
    ("POST", "/v1/sessions/{session_id}/model"): Operation(
        "Set the session's model",
        params=(_SESSION,),
        body=ModelBody,
        response=SessionView,
        errors=(400, 404, 409),
        tag="sessions",
    ),
    ("POST", "/v1/sessions/{session_id}/config"): Operation(
        "Set one of the session's config options",
        params=(_SESSION,),
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
        params=(_SESSION, _AFTER, _LIMIT),
        response={_SSE: _SSE_SCHEMA, "application/json": _ENVELOPES},
        errors=(400, 404),
        tag="sessions",
        extra={"x-envelope": {"anyOf": [_ref("EventEnvelope"), _ref("StateEnvelope")]}},
    ),
    ("GET", "/v1/sessions/{session_id}/ws"): Operation(
        "The session over a WebSocket",
        "An upgrade. The server sends envelopes as text frames (after `after`); the client "
        'may send `{"op": "prompt", "text"}`, `{"op": "permission", "request_id", '
        '"option_id"}` or `{"op": "cancel"}`, each answered with `{"reply": op, "ok", '
        '"error"?}`. Refused (1008) before it is accepted for a wrong token, Origin or '
        "session; closed with 1001 at shutdown, 1009 for a message over 64 MiB.",
        params=(_SESSION, _AFTER),
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
            _AGENTS,
            _PROJECT,
            _SINCE,
            _UNTIL,
            Param("q", "Sessions whose id, summary or first prompt holds this (any case)."),
            Param("limit", "At most this many sessions (default: every one).", _SEQ),
            Param("offset", "Skip this many newer ones first (default 0).", _SEQ),
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
            _AGENTS,
            _PROJECT,
            _SINCE,
            _UNTIL,
            Param("limit", "At most this many sessions (1 to 200, default 200).", _SEQ),
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
                _choice(("events", "json", "markdown", "html")),
            ),
            _PROJECT,
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
            _AGENTS,
            _SINCE,
            _UNTIL,
            _PROJECT,
            Param("by", "One row per (default `day`).", _choice(GROUPINGS)),
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
        params=(_BATCH,),
        response=BatchView,
        errors=(404,),
        tag="batches",
    ),
    ("GET", "/v1/batches/{batch_id}/events"): Operation(
        "A batch's progress",
        "Server-Sent Events of progress envelopes: every one after `after`, then each new one "
        "while the batch runs. With `Accept: application/json`, the envelopes so far.",
        params=(_BATCH, _AFTER, _LIMIT),
        response={
            _SSE: _SSE_SCHEMA,
            "application/json": {"$ref": REF.format(name="ProgressEnvelopes")},
        },
        errors=(400, 404),
        tag="batches",
        extra=_sse("ProgressEnvelope"),
    ),
    ("POST", "/v1/batches/{batch_id}/retry-failed"): Operation(
        "Run again what failed or did not finish",
        params=(_BATCH,),
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
        params=(_BATCH,),
        response=TaskRows,
        errors=(404,),
        tag="batches",
    ),
    ("GET", "/v1/batches/{batch_id}/tasks/{task_id}/events"): Operation(
        "A task's events",
        "The task's events file (while it runs, what it wrote so far), `seq` its line number.",
        params=(_BATCH, Param("task_id", "The task's id.", where="path"), _AFTER, _LIMIT),
        response=EventEnvelopes,
        errors=(400, 404, 422),
        tag="batches",
    ),
    ("GET", "/acp"): Operation(
        "An ACP agent (`?agent=`): a WebSocket, or a Streamable HTTP stream",
        "The Agent Client Protocol's transport RFD (docs/server.md says where it departs). "
        "A WebSocket upgrade starts one agent for the socket: each text frame is one "
        "JSON-RPC message, both ways; the socket closing stops the agent (1001 at shutdown "
        "or after `--idle-timeout` with no message and no turn, 1009 for a message over "
        "64 MiB; refused with 1008 for a wrong token or Origin). "
        "Otherwise (`Accept: text/event-stream`), the SSE stream of a Streamable HTTP "
        "connection (`Acp-Connection-Id`), or of one of its sessions (`Acp-Session-Id`): "
        "the agent's messages, one an event; one reader at a time (409); the connection's "
        "stream closing stops the agent.",
        params=(_ACP_AGENT_QUERY, _ACP_CONNECTION, _ACP_SESSION),
        response={_SSE: {"type": "string", "description": "`data: <JSON-RPC message>`"}},
        errors=(400, 404, 406, 409),
        tag="acp",
    ),
    ("POST", "/acp"): Operation(
        "Send an ACP message (Streamable HTTP)",
        "`initialize` starts the connection's agent and is answered in the body, with the "
        "`Acp-Connection-Id` header; every other message needs that header (and "
        "`Acp-Session-Id` for a method on a session) and is answered 202, its answer coming "
        "on a stream. A message naming a session's folder outside the roots is answered on "
        "the stream with its JSON-RPC error (-32602), and never reaches the agent; a batch "
        "is 501. The body "
        "may be up to 64 MiB, the stdio line cap (413 above it). Past `--max-sessions` "
        "connections at once, `initialize` is 503.",
        params=(_ACP_AGENT_QUERY, _ACP_CONNECTION, _ACP_SESSION),
        body={"application/json": _ACP_MESSAGE},
        response={"application/json": _ACP_MESSAGE},
        errors=(400, 404, 413, 415, 501, 502, 503, 504),
        tag="acp",
    ),
    ("DELETE", "/acp"): Operation(
        "End an ACP connection (Streamable HTTP): its agent stops",
        params=(_ACP_AGENT_QUERY, _ACP_CONNECTION),
        status=202,
        errors=(400, 404),
        tag="acp",
    ),
    ("GET", "/acp/{agent}"): Operation(
        "An ACP agent: a WebSocket, or a Streamable HTTP stream",
        "The Agent Client Protocol's transport RFD (docs/server.md says where it departs). "
        "A WebSocket upgrade starts one agent for the socket: each text frame is one "
        "JSON-RPC message, both ways; the socket closing stops the agent (1001 at shutdown "
        "or after `--idle-timeout` with no message and no turn, 1009 for a message over "
        "64 MiB; refused with 1008 for a wrong token or Origin). "
        "Otherwise (`Accept: text/event-stream`), the SSE stream of a Streamable HTTP "
        "connection (`Acp-Connection-Id`), or of one of its sessions (`Acp-Session-Id`): "
        "the agent's messages, one an event; one reader at a time (409); the connection's "
        "stream closing stops the agent.",
        params=(_ACP_AGENT, _ACP_CONNECTION, _ACP_SESSION),
        response={_SSE: {"type": "string", "description": "`data: <JSON-RPC message>`"}},
        errors=(400, 404, 406, 409),
        tag="acp",
    ),
    ("POST", "/acp/{agent}"): Operation(
        "Send an ACP message (Streamable HTTP)",
        "`initialize` starts the connection's agent and is answered in the body, with the "
        "`Acp-Connection-Id` header; every other message needs that header (and "
        "`Acp-Session-Id` for a method on a session) and is answered 202, its answer coming "
        "on a stream. A message naming a session's folder outside the roots is answered on "
        "the stream with its JSON-RPC error (-32602), and never reaches the agent; a batch "
        "is 501. The body "
        "may be up to 64 MiB, the stdio line cap (413 above it). Past `--max-sessions` "
        "connections at once, `initialize` is 503.",
        params=(_ACP_AGENT, _ACP_CONNECTION, _ACP_SESSION),
        body={"application/json": _ACP_MESSAGE},
        response={"application/json": _ACP_MESSAGE},
        errors=(400, 404, 413, 415, 501, 502, 503, 504),
        tag="acp",
    ),
    ("DELETE", "/acp/{agent}"): Operation(
        "End an ACP connection (Streamable HTTP): its agent stops",
        params=(_ACP_AGENT, _ACP_CONNECTION),
        status=202,
        errors=(400, 404),
        tag="acp",
    ),
}
"""Every route of the app, by (method, path as Starlette spells it)."""

_NAMED = (
    ErrorBody,
    Health,
    Ready,
    EventEnvelope,
    StateEnvelope,
    EventEnvelopes,
    ProgressEnvelope,
    ProgressEnvelopes,
    SavedSessions,
    SavedEvents,
    SavedMessages,
    Batches,
    BatchView,
    BatchRequest,
    UsageReport,
    AgentEntry,
    Event,
)
"""Types whose schemas are components whether or not a route names them (the envelopes
are what the streams carry)."""

_CONVERTOR = re.compile(r"\{([^}:]+):[^}]+\}")


def _endpoints(routes: Sequence[BaseRoute], prefix: str = "") -> list[tuple[str, str]]:
    """(method, path) of every route, HEAD left out; a WebSocket is a GET (its upgrade)."""
    found: list[tuple[str, str]] = []
    for route in routes:
        if isinstance(route, Route):
            path = _CONVERTOR.sub(r"{\1}", prefix + route.path)
            methods = sorted((route.methods or {"GET"}) - {"HEAD"})
            found += [(method, path) for method in methods]
        elif isinstance(route, WebSocketRoute):
            found.append(("GET", _CONVERTOR.sub(r"{\1}", prefix + route.path)))
        elif isinstance(route, Mount):
            inner = route.routes
            if inner:
                found += _endpoints(inner, prefix + route.path)
            else:
                found.append(("GET", prefix + route.path + "/{path}"))
    return found


def undescribed(routes: Sequence[BaseRoute]) -> tuple[list[str], list[str]]:
    """Routes without a description, and descriptions without a route (``METHOD path``)."""
    endpoints = _endpoints(routes)
    missing = [f"{m} {p}" for m, p in endpoints if (m, p) not in OPERATIONS]
    stale = [f"{m} {p}" for m, p in OPERATIONS if (m, p) not in endpoints]
    return missing, stale


def _content(response: Any) -> dict[str, Any]:
    if isinstance(response, dict):
        return {media: {"schema": schema} for media, schema in response.items()}
    return {"application/json": {"schema": {"$ref": REF.format(name=response.__name__)}}}


def _operation(method: str, path: str, op: Operation) -> dict[str, Any]:
    described: dict[str, Any] = {
        "summary": op.summary,
        "operationId": _operation_id(method, path),
        "tags": [op.tag],
    }
    if op.description:
        described["description"] = op.description
    if op.params:
        described["parameters"] = [
            {
                "name": p.name,
                "in": p.where,
                "required": p.where == "path",
                "description": p.description,
                "schema": p.schema,
            }
            for p in op.params
        ]
    if op.body is not None:
        described["requestBody"] = {"required": True, "content": _content(op.body)}
    responses: dict[str, Any] = {}
    ok: dict[str, Any] = {"description": "Switching protocols" if op.status == 101 else "OK"}
    if op.response is not None:
        ok["content"] = _content(op.response)
    responses[str(op.status)] = ok
    statuses = sorted({*op.errors, *(() if op.public else (401, 403))})
    for status in statuses:
        responses[str(status)] = {
            "description": _REASONS[status],
            "content": _content(ErrorBody),
        }
    described["responses"] = responses
    if op.public:
        described["security"] = []
    described.update(op.extra)
    return described


_REASONS = {
    400: "Bad request",
    401: "No token, or a wrong one",
    403: "A foreign Origin or Host, or a path outside the roots",
    404: "Not found",
    406: "Not acceptable",
    409: "Conflict",
    413: "The body is over 1 MiB",
    415: "Unsupported media type",
    422: "Cannot be read",
    429: "A limit is reached",
    501: "Not implemented (a JSON-RPC batch)",
    502: "The agent ended first",
    503: "Shutting down",
    504: "The agent did not answer in time",
}


def _operation_id(method: str, path: str) -> str:
    """``get_v1_batches_batch_id_events``."""
    words = re.findall(r"[A-Za-z0-9]+", path)
    return "_".join([method.lower(), *words]) if words else method.lower()


def openapi_document(routes: Sequence[BaseRoute]) -> dict[str, Any]:
    """The document of ``routes`` (an app's ``routes``); routes without a description
    are left out (`undescribed` names them)."""
    paths: dict[str, dict[str, Any]] = {}
    for method, path in _endpoints(routes):
        op = OPERATIONS.get((method, path))
        if op is not None:
            paths.setdefault(path, {})[method.lower()] = _operation(method, path, op)
    named = [*_NAMED, *_referenced()]
    _, components = msgspec.json.schema_components(named, ref_template=REF)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "gemwire serve",
            "version": "1",
            "description": "Agents behind an HTTP, SSE and WebSocket API (docs/server.md). "
            "Events are the `--json` vocabulary of docs/events.md, in envelopes "
            '`{"seq": N, "event": {...}}`.',
        },
        "security": [{"bearer": []}, {"cookie": []}],
        "paths": dict(sorted(paths.items())),
        "components": {
            "schemas": dict(sorted(components.items())),
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "cookie": {"type": "apiKey", "in": "cookie", "name": "gemwire_token"},
            },
        },
    }


def _referenced() -> list[Any]:
    """Types the operations name as a body or a response."""
    found: list[Any] = []
    for op in OPERATIONS.values():
        for shape in (op.body, op.response):
            if shape is not None and not isinstance(shape, dict) and shape not in found:
                found.append(shape)
    return found


def render(document: dict[str, Any]) -> str:
    """The document as committed: sorted keys, two-space indents, a final newline."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


async def openapi_json(request: Request) -> JsonResponse:
    cached = getattr(request.app.state, "gemwire_openapi", None)
    if cached is None:
        cached = request.app.state.gemwire_openapi = openapi_document(request.app.routes)
    return JsonResponse(cached)


ROUTES: list[BaseRoute] = [Route("/openapi.json", openapi_json, methods=["GET"])]


def main() -> None:
    """Write the document of the app's routes to stdout (the module docstring's command)."""
    from gemwire.server.app import create_app
    from gemwire.server.config import ServerConfig

    config = ServerConfig(host="127.0.0.1", port=8765, token="-", roots=("/",), state_dir="/-")
    sys.stdout.write(render(openapi_document(create_app(config).routes)))
