"""What an ACP client receives from an agent, typed: the items `AcpClientConnection` gives."""

from __future__ import annotations

from typing import Any

import msgspec

from gemwire.protocol.framing import OversizedLine
from gemwire.protocol.jsonrpc import ErrorResponse, LoneSurrogates, ProtocolViolation
from gemwire.wire.jsonrpc import RequestId

__all__ = (
    "AcpItem",
    "AgentError",
    "AgentNotification",
    "AgentRequest",
    "AgentResult",
    "SessionUpdate",
    "UnknownUpdate",
    "UnservedRequest",
)


class SessionUpdate(msgspec.Struct, frozen=True, kw_only=True):
    """A ``session/update`` of a known kind; ``update``'s type is
    ``SESSION_UPDATE_TYPES[kind]``."""

    session_id: str
    kind: str
    update: Any


class UnknownUpdate(msgspec.Struct, frozen=True, kw_only=True):
    """A ``session/update`` of a kind this schema does not know, or in a shape that does
    not fit its kind; ``raw`` is the whole notification's params."""

    session_id: str | None
    kind: str | None
    raw: str
    reason: str


class AgentRequest(msgspec.Struct, frozen=True, kw_only=True):
    """The agent asks the client something; ``params``' type is ``REQUEST_TYPES[method]``."""

    id: RequestId
    method: str
    params: Any


class UnservedRequest(msgspec.Struct, frozen=True, kw_only=True):
    """A request the client cannot serve: answer it with ``code`` and ``message``."""

    id: RequestId
    method: str
    code: int
    message: str


class AgentNotification(msgspec.Struct, frozen=True, kw_only=True):
    """A notification other than ``session/update`` (e.g. an ``_``-prefixed extension)."""

    method: str
    params: str | None


class AgentResult(msgspec.Struct, frozen=True, kw_only=True):
    """The answer to one of the client's requests; ``result``'s type is
    ``RESULT_TYPES[method]``, or plain JSON for other methods."""

    id: RequestId
    method: str
    result: Any


AgentError = ErrorResponse
"""The agent answered one of the client's requests with an error: the JSON-RPC error
response itself."""


AcpItem = (
    SessionUpdate
    | UnknownUpdate
    | AgentRequest
    | UnservedRequest
    | AgentNotification
    | AgentResult
    | AgentError
    | ProtocolViolation
    | OversizedLine
    | LoneSurrogates
)
