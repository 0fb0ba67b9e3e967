"""The shapes of ``gemwire serve``'s API, written once: what its session routes take and
answer, and the WebSocket's ops and replies (docs/server.md).

The routes encode these (`gemwire.server`), the OpenAPI document's schemas are made of
them (docs/openapi.json), and `gemwire.remote` decodes them. This module needs msgspec
alone, so a client without the ``serve`` extra imports it.

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

from gemwire.events import PermissionRequested, TokenUsage
from gemwire.wire import acp

__all__ = (
    "AgentEntry",
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
    "PromptBody",
    "PromptOp",
    "Prompted",
    "Ready",
    "Roots",
    "SessionView",
    "Sessions",
    "Status",
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


class NewSession(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    agent: str = "gemini"
    cwd: str | None = None
    model: str | None = None
    mode: str | None = None
    permissions: Permissions = "ask"
    continue_: str | None = msgspec.field(default=None, name="continue")
    """The agent's id of a saved session to continue (``session/resume``, else
    ``session/load``)."""


class PromptBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
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
