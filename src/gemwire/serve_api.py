"""The shapes of ``gemwire serve``'s API, written once: what its routes take and answer
(sessions, saved sessions, batches), and the WebSocket's ops and replies (docs/server.md).

The routes encode these (`gemwire.server`), the OpenAPI document's schemas are made of
them (docs/openapi.json), and `gemwire.remote` decodes them. This module needs msgspec and
gemwire's own data types alone (no extra), so a client without ``serve`` imports it.

The WebSocket's ops are a tagged union on ``op``:

    >>> msgspec.json.decode(b'{"op": "cancel"}', type=WsOp)
    CancelOp()
    >>> msgspec.json.decode(b'{"op": "permission", "request_id": "0", "option_id": null}',
    ...                     type=WsOp)
    PermissionOp(request_id='0', option_id=None)
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from gemwire.batch import Task
from gemwire.events import Event, PermissionRequested, TokenUsage
from gemwire.sessions import SearchHit, SessionInfo
from gemwire.wire import acp

__all__ = (
    "AgentEntry",
    "BatchError",
    "BatchRequest",
    "BatchStatus",
    "BatchView",
    "Batches",
    "CancelOp",
    "Cancelled",
    "ConfigBody",
    "Degraded",
    "ErrorBody",
    "ErrorDetail",
    "Health",
    "ModeBody",
    "ModelBody",
    "NewSession",
    "PermissionAnswer",
    "PermissionAnswered",
    "PermissionOp",
    "Permissions",
    "PromptBody",
    "PromptOp",
    "Prompted",
    "Ready",
    "Roots",
    "SavedAgent",
    "SavedEvents",
    "SavedMessages",
    "SavedSearch",
    "SavedSearchHit",
    "SavedSessions",
    "SessionView",
    "Sessions",
    "Status",
    "TaskRow",
    "TaskRows",
    "TaskState",
    "WsOp",
    "WsReply",
)

Status = Literal["starting", "idle", "running", "stopped", "closed"]
"""``starting``: the agent is being started (or a stopped session continued); ``idle``:
ready for a prompt; ``running``: a turn runs; ``stopped``: no agent (idle timeout, a
restarted server, a crash: a prompt continues it); ``closed``: deleted, the log stays."""

Permissions = Literal["ask", "deny", "reads", "edits", "all"]


# ---- Errors and health. ------------------------------------------------------------------
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


class Degraded(msgspec.Struct, frozen=True):
    """A session out of service until the server restarts."""

    session: str
    reason: str
    """Its log could not be written, or was found damaged."""


class Ready(msgspec.Struct, frozen=True, omit_defaults=True):
    ready: bool
    degraded: list[Degraded] = []
    """Present when sessions are out of service (the server serves the rest)."""


# ---- Agents, roots, sessions. ------------------------------------------------------------
class AgentEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One agent as ``GET /v1/agents`` shows it (``command`` with secrets masked)."""

    name: str
    title: str
    transport: Literal["acp", "stream-json"] | str
    """(A newer server's kind of agent comes as its string.)"""
    available: bool
    command: list[str]
    detail: str | None = None


class Roots(msgspec.Struct, frozen=True):
    roots: list[str]


class SessionView(msgspec.Struct, frozen=True, kw_only=True):
    """A session as the API shows it, every field always there. ``id`` is the server's
    (``s_`` + 16 hex), ``agent_session_id`` the agent's own."""

    id: str
    agent: str
    cwd: str
    agent_session_id: str | None
    status: Status | str
    """(A status a newer server adds comes as its string.)"""
    created: str
    title: str | None
    last_seq: int
    modes: list[dict[str, Any]] | None
    current_mode: str | None
    models: list[dict[str, Any]] | None
    current_model: str | None
    """The model that runs: the agent's ``currentModelId`` or the last one set (a
    ``gemini-stream`` session's ``--model``); ``None`` when the agent did not say."""
    config_options: list[dict[str, Any]] | None
    commands: list[dict[str, Any]] | None
    usage: TokenUsage | None
    pending_permissions: list[PermissionRequested]


class Sessions(msgspec.Struct, frozen=True):
    sessions: list[SessionView]


class NewSession(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    agent: str = "gemini"
    cwd: str | None = None
    model: str | None = None
    mode: str | None = None
    permissions: Permissions = "ask"
    continue_: str | None = msgspec.field(default=None, name="continue")
    """The agent's id of a saved session to continue (``session/resume``, else
    ``session/load``)."""


class PromptBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """Exactly one of ``text`` and ``prompt`` (ACP content blocks)."""

    text: str | None = None
    prompt: list[acp.ContentBlock] | None = None


class Prompted(msgspec.Struct, frozen=True):
    after: int
    """The last seq before the turn: read the stream with ``?after=`` this."""


class Cancelled(msgspec.Struct, frozen=True):
    cancelled: bool


class PermissionAnswer(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    option_id: str | None


class PermissionAnswered(msgspec.Struct, frozen=True):
    request_id: str
    option_id: str | None


class ModeBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    mode_id: str


class ModelBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    model_id: str


class ConfigBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    config_id: str
    value: str | bool
    """One of the option's value ids, or a boolean for a ``type: "boolean"`` option."""


# ---- Saved sessions. ----------------------------------------------------------------------
class SavedAgent(msgspec.Struct, frozen=True):
    """An agent whose saved sessions the server reads (a value of ``agent=``)."""

    name: str
    title: str


class SavedSessions(msgspec.Struct, frozen=True, kw_only=True):
    """A page of the listing, newest first."""

    sessions: list[SessionInfo]
    total: int
    """Sessions matching the filters, on every page."""
    offset: int
    """How many newer ones come before this page."""
    agents: list[SavedAgent]
    """Every agent whose saved sessions the server reads, whichever ``agent`` is chosen
    (the choices of ``agent``)."""
    projects: list[str]
    """The projects ``agent``'s sessions are in, whatever the other filters (the choices of
    ``project``), sorted."""
    unread: dict[str, str] = {}
    """What of the agents' homes could not be read, path -> why (OpenCode's database locked
    or not one, a sessions folder that is a file): their sessions are missing from the list."""


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
    """``format=events``: the session's normalized events."""

    events: list[Event]


class SavedMessages(msgspec.Struct, frozen=True):
    """``format=json``: the session, and its messages."""

    session: SessionInfo
    messages: list[dict[str, Any]]
    """Claude-compatible messages (``gemwire sessions export --format claude``)."""


# ---- Batches. ------------------------------------------------------------------------------
class BatchRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``POST /v1/batches``: tasks (a JSONL file under a root, or the task objects) and an
    output folder under a root; or ``open``, an existing output folder, read-only."""

    tasks: str | list[Task] | None = None
    output: str | None = None
    agent: str = "gemini"
    concurrency: int = 4
    timeout: float | None = None
    """Seconds per task (a task's own ``timeout`` wins)."""
    permissions: Literal["deny", "reads", "edits", "all"] = "deny"
    """How the agent's permission requests are answered (a task's own wins): no one is
    there to ask during a batch."""
    open: str | None = None


BatchStatus = Literal["running", "finished", "stopped", "failed"]


class BatchError(msgspec.Struct, frozen=True):
    kind: str
    message: str


class BatchView(msgspec.Struct, frozen=True, kw_only=True):
    """A batch as ``GET /v1/batches/{id}`` shows it."""

    id: str
    status: BatchStatus
    output: str
    agent: str | None
    created: str
    read_only: bool
    tasks: int
    """Tasks in the batch (opened read-only: tasks with a result)."""
    done: int
    """Tasks with a result (ok or failed), earlier runs' included."""
    failed: int
    running: int
    pending: int
    eta_s: float | None
    """Seconds until every task has a result at this run's pace; ``null`` until one
    finished in this run, or when the batch is not running."""
    failed_by_kind: dict[str, int]
    last_seq: int
    error: BatchError | None = None
    """Why the batch itself failed (its output folder, its agent): ``status`` ``failed``."""


class Batches(msgspec.Struct, frozen=True):
    batches: list[BatchView]


TaskState = Literal["done", "failed", "running", "pending", "unfinished"]


class TaskRow(msgspec.Struct, frozen=True, kw_only=True):
    """One task as ``GET /v1/batches/{id}/tasks`` lists it."""

    id: str
    status: TaskState
    """``unfinished``: a folder opened read-only holds its events but no result (the run
    that had it stopped, or another process runs it)."""
    attempts: int | None = None
    error_kind: str | None = None
    error_message: str | None = None
    duration_s: float | None = None


class TaskRows(msgspec.Struct, frozen=True):
    """``GET /v1/batches/{id}/tasks``."""

    tasks: list[TaskRow]


# ---- The WebSocket's ops and replies. ----------------------------------------------------
class PromptOp(msgspec.Struct, frozen=True, kw_only=True, tag_field="op", tag="prompt"):
    """Start a turn, as ``POST .../prompt``: exactly one of ``text`` and ``prompt``."""

    text: str | None = None
    prompt: list[acp.ContentBlock] | None = None


class PermissionOp(msgspec.Struct, frozen=True, kw_only=True, tag_field="op", tag="permission"):
    """Answer a permission request, as ``POST .../permissions/{request_id}``."""

    request_id: str
    option_id: str | None = None


class CancelOp(msgspec.Struct, frozen=True, kw_only=True, tag_field="op", tag="cancel"):
    """Cancel the running turn, as ``POST .../cancel``."""


WsOp = PromptOp | PermissionOp | CancelOp
"""What a client sends on ``/v1/sessions/{id}/ws``, one op a text frame."""


class WsReply(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The answer to each op, in the order they came: ``reply`` names the op (``null`` when
    the frame was no op at all); ``after`` for a prompt; ``error`` when not ``ok``."""

    reply: Literal["prompt", "permission", "cancel"] | None
    ok: bool
    after: int | None = None
    error: ErrorDetail | None = None
