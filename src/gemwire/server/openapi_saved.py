"""The saved-session and batch routes of ``gemwire serve`` described for its OpenAPI
document (`openapi_table`), by endpoint."""

from __future__ import annotations

from gemwire.serve_api import Batches, BatchRequest, BatchView, SavedSearch, SavedSessions, TaskRows
from gemwire.server import routes_batches, routes_eval, routes_saved
from gemwire.server.openapi_shapes import (
    AFTER,
    AGENTS,
    BATCH,
    LIMIT,
    PROJECT,
    REF,
    SEQ_SCHEMA,
    SINCE,
    SSE,
    SSE_SCHEMA,
    UNTIL,
    EventEnvelopes,
    Operation,
    Param,
    choice,
    sse_envelope,
)
from gemwire.sessions import GROUPINGS, UsageReport

__all__ = ("SAVED_AND_BATCHES",)

SAVED_AND_BATCHES: dict[object, Operation] = {
    routes_saved.list_saved: Operation(
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
    routes_saved.search_saved: Operation(
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
    routes_saved.read_saved: Operation(
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
    routes_saved.usage_report: Operation(
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
    routes_batches.create_batch: Operation(
        "Start a batch, or open an output folder",
        "Tasks (a file under a root, or the task objects) through an agent into an output "
        "folder under a root; or `open`, an existing output folder, read-only (200 when that "
        "folder's batch is known already; its tasks: `GET /v1/batches/{batch_id}/tasks`).",
        body=BatchRequest,
        status=201,
        also=(200,),
        response=BatchView,
        errors=(400, 403, 404, 409, 413),
        tag="batches",
    ),
    routes_batches.list_batches: Operation("List batches", response=Batches, tag="batches"),
    routes_batches.get_batch: Operation(
        "A batch and its progress",
        params=(BATCH,),
        response=BatchView,
        errors=(404,),
        tag="batches",
    ),
    routes_batches.batch_events: Operation(
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
    routes_batches.retry_failed: Operation(
        "Run again what failed or did not finish",
        params=(BATCH,),
        status=202,
        response=BatchView,
        errors=(404, 409),
        tag="batches",
    ),
    routes_batches.list_tasks: Operation(
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
    routes_eval.get_report: Operation(
        "An eval's report",
        "For a batch whose output folder is an eval's: `gemwire eval report --json`'s "
        "`agents` and `tasks`, each agent's pass rate with its 95 % Wilson interval, and every "
        "attempt's verdict. A batch that is not an eval: `is_eval` false, the rest empty.",
        params=(BATCH,),
        response=routes_eval.EvalReportView,
        errors=(404, 422),
        tag="batches",
    ),
    routes_batches.task_events: Operation(
        "A task's events",
        "The task's events file (while it runs, what it wrote so far), `seq` its line number.",
        params=(BATCH, Param("task_id", "The task's id.", where="path"), AFTER, LIMIT),
        response=EventEnvelopes,
        errors=(400, 404, 422),
        tag="batches",
    ),
}
