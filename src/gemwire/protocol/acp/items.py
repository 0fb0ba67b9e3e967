"""What an ACP client receives from an agent, typed: the items `AcpClientConnection` gives."""

from __future__ import annotations

import msgspec

from gemwire.protocol.acp.calls import Json
from gemwire.protocol.acp.routes import AgentRequestParams
from gemwire.protocol.framing import OversizedLine
from gemwire.protocol.jsonrpc import ErrorResponse, LoneSurrogates, ProtocolViolation
from gemwire.wire import acp
from gemwire.wire.jsonrpc import RequestId

__all__ = (
    "AcpItem",
    "AgentError",
    "AgentNotification",
    "AgentRequest",
    "AgentResult",
    "AgentResultValue",
    "SessionUpdate",
    "UnknownUpdate",
    "UnservedRequest",
)


class SessionUpdate(msgspec.Struct, frozen=True, kw_only=True):
    """A ``session/update`` of a known kind: ``update`` is the variant of its kind."""

    session_id: str
    update: acp.update.SessionUpdate

    @property
    def kind(self) -> str:
        """The ``sessionUpdate`` tag (``agent_message_chunk``)."""
        return acp.update.KIND_OF[type(self.update)]


class UnknownUpdate(msgspec.Struct, frozen=True, kw_only=True):
    """A ``session/update`` of a kind this schema does not know, or in a shape that does
    not fit its kind; ``raw`` is the whole notification's params."""

    session_id: str | None
    kind: str | None
    raw: str
    reason: str


class AgentRequest(msgspec.Struct, frozen=True, kw_only=True):
    """The agent asks the client something; ``params`` is of ``ROUTES[method]``'s type."""

    id: RequestId
    method: str
    params: AgentRequestParams


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


AgentResultValue = (
    acp.InitializeResponse
    | acp.NewSessionResponse
    | acp.LoadSessionResponse
    | acp.ResumeSessionResponse
    | acp.ForkSessionResponse
    | acp.ListSessionsResponse
    | acp.PromptResponse
    | Json
)
"""The result of one of the client's requests: of the `Call`'s type, else of
``RESULT_TYPES[method]``, else plain JSON."""


class AgentResult(msgspec.Struct, frozen=True, kw_only=True):
    """The answer to one of the client's requests; ``result``'s type is the `Call`'s
    ``result_type``, or ``RESULT_TYPES[method]``, or plain JSON for other methods."""

    id: RequestId
    method: str
    result: AgentResultValue


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
