"""The shapes of the OpenAPI document (`openapi`): the answers routes write from their logs
as they are (envelopes, not encoded: `gemwire.serve_api` has every answer that is), named
for the document, and how an operation and its parameters are declared."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

from gemwire.batch import Progress
from gemwire.server.envelopes import EventEnvelope

__all__ = (
    "ACP_AGENT",
    "ACP_CONNECTION",
    "ACP_MESSAGE",
    "ACP_SESSION",
    "AFTER",
    "AGENTS",
    "BATCH",
    "LIMIT",
    "PROJECT",
    "REF",
    "SEQ_SCHEMA",
    "SESSION",
    "SINCE",
    "SSE",
    "SSE_SCHEMA",
    "UNTIL",
    "Operation",
    "Param",
    "choice",
    "ref",
    "sse_envelope",
)

REF = "#/components/schemas/{name}"


# ---- The shapes the routes answer with, named for the document. -------------------------
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
    also: tuple[int, ...] = ()
    """Other success statuses, answered with the same ``response``."""
    errors: tuple[int, ...] = ()
    public: bool = False
    tag: str = "server"
    extra: dict[str, Any] = field(default_factory=dict)


# ---- The parameters operations share. ---------------------------------------------------
def choice(values: Sequence[str]) -> dict[str, Any]:
    return {"type": "string", "enum": list(values)}


SEQ_SCHEMA = {"type": "integer", "minimum": 0}
AFTER = Param(
    "after", "Only what comes after this sequence number (also `Last-Event-ID`).", SEQ_SCHEMA
)
LIMIT = Param("limit", "At most this many (1 to 1000, default 1000).", SEQ_SCHEMA)
AGENTS = Param("agent", "Whose saved sessions: an agent's name, or `all` (default).")
SINCE = Param("since", "From this day or moment: `2026-11-01`, `today`, `7d`, `12h`, ISO time.")
UNTIL = Param("until", "Until this day or moment, as `since`.")
PROJECT = Param("project", "Only this project (its root folder).")
BATCH = Param("batch_id", "The batch's id (`b_` and 16 hex digits).", where="path")
SESSION = Param("session_id", "The server's session id (`s_` and 16 hex digits).", where="path")
ACP_AGENT = Param("agent", "The agent: a built-in one or an `--agent` one.", where="path")
ACP_AGENT_QUERY = Param(
    "agent", "The agent: a built-in one or an `--agent` one (default `gemini`).", where="query"
)
ACP_CONNECTION = Param(
    "Acp-Connection-Id", "The connection (the answer to `initialize` names it).", where="header"
)
ACP_SESSION = Param(
    "Acp-Session-Id", "The session the message is on, or whose stream to read.", where="header"
)
ACP_MESSAGE = {
    "type": "object",
    "description": "One JSON-RPC 2.0 message of the Agent Client Protocol, passed as it is.",
}
SSE = "text/event-stream"
SSE_SCHEMA = {"type": "string", "description": "`id: N`, `event: gemwire`, `data: <envelope>`"}


def ref(name: str) -> dict[str, str]:
    return {"$ref": REF.format(name=name)}


def sse_envelope(envelope: str) -> dict[str, Any]:
    return {"x-envelope": ref(envelope)}
