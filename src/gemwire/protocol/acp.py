"""The client side of an ACP connection, sans-IO: JSON-RPC messages -> typed ACP items.

`AcpClientConnection` sits on `JsonRpcConnection` and knows ACP's methods: it decodes
``session/update`` by its ``sessionUpdate`` kind, the agent's requests
(``session/request_permission``, ``fs/*``, ``terminal/*``) into their request types, and
the results of the client's own requests into their response types. What it cannot
type never raises: an update of an unknown kind or shape is an `UnknownUpdate`, a
request it cannot serve an `UnservedRequest` (the caller answers it with an error), an
unreadable result an `AgentError` plus a `ProtocolViolation`.

    >>> conn = AcpClientConnection()
    >>> conn.receive_data(
    ...     b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s",'
    ...     b'"update":{"sessionUpdate":"agent_message_chunk",'
    ...     b'"content":{"type":"text","text":"Hi"}}}}\\n'
    ... )  # doctest: +NORMALIZE_WHITESPACE
    [SessionUpdate(session_id='s', kind='agent_message_chunk',
        update=ContentChunk(content=TextContent(text='Hi')))]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Generic, Literal, TypeVar

import msgspec

from gemwire.errors import AgentRequestFailed, GemwireError
from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES
from gemwire.protocol.jsonrpc import (
    DECODE_ERRORS,
    ErrorResponse,
    JsonRpcConnection,
    Notification,
    OversizedLine,
    ProtocolViolation,
    Request,
    Response,
)
from gemwire.wire import acp
from gemwire.wire.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    ErrorObject,
    RequestId,
)

__all__ = (
    "REQUEST_TYPES",
    "RESULT_TYPES",
    "AcpClientConnection",
    "AcpItem",
    "AcpSessionState",
    "AgentError",
    "AgentNotification",
    "AgentRequest",
    "AgentResult",
    "Call",
    "OversizedLine",
    "ProtocolViolation",
    "SessionUpdate",
    "UnknownUpdate",
    "UnservedRequest",
    "authenticate",
    "check_prompt",
    "initialize",
    "list_sessions",
    "load_session",
    "new_session",
    "prompt",
    "require_capability",
    "set_config_option",
    "set_mode",
    "set_model",
)

_M = acp.CLIENT_METHODS
REQUEST_TYPES: dict[str, type[msgspec.Struct]] = {
    _M["session_request_permission"]: acp.RequestPermissionRequest,
    _M["fs_read_text_file"]: acp.ReadTextFileRequest,
    _M["fs_write_text_file"]: acp.WriteTextFileRequest,
    _M["terminal_create"]: acp.CreateTerminalRequest,
    _M["terminal_output"]: acp.TerminalOutputRequest,
    _M["terminal_wait_for_exit"]: acp.WaitForTerminalExitRequest,
    _M["terminal_kill"]: acp.KillTerminalRequest,
    _M["terminal_release"]: acp.ReleaseTerminalRequest,
}
"""The agent-to-client requests a client may serve, and their params types."""

_A = acp.AGENT_METHODS
RESULT_TYPES: dict[str, type[msgspec.Struct]] = {
    _A["initialize"]: acp.InitializeResponse,
    _A["session_new"]: acp.NewSessionResponse,
    _A["session_load"]: acp.LoadSessionResponse,
    _A["session_list"]: acp.ListSessionsResponse,
    _A["session_prompt"]: acp.PromptResponse,
}
"""Result types of the client's requests; the others' results are kept as plain JSON."""

R = TypeVar("R")


class Call(Generic[R]):
    """One request of the client's and the type its result decodes to: the pending table
    keeps the type, so the answer comes back typed (``Call[acp.InitializeResponse]``)."""

    __slots__ = ("method", "params", "result_type")

    def __init__(self, method: str, params: Any, result_type: type[R]) -> None:
        self.method = method
        self.params = params
        self.result_type = result_type


Json = Any
"""A result kept as plain JSON (these methods answer ``{}``, or ``null``, or a few fields)."""


def initialize(params: acp.InitializeRequest) -> Call[acp.InitializeResponse]:
    return Call(_A["initialize"], params, acp.InitializeResponse)


def authenticate(params: acp.AuthenticateRequest | dict[str, Any]) -> Call[Json]:
    return Call(_A["authenticate"], params, object)


def new_session(params: acp.NewSessionRequest) -> Call[acp.NewSessionResponse]:
    return Call(_A["session_new"], params, acp.NewSessionResponse)


def load_session(params: acp.LoadSessionRequest) -> Call[acp.LoadSessionResponse]:
    return Call(_A["session_load"], params, acp.LoadSessionResponse)


def list_sessions(params: acp.ListSessionsRequest) -> Call[acp.ListSessionsResponse]:
    return Call(_A["session_list"], params, acp.ListSessionsResponse)


def prompt(params: acp.PromptRequest) -> Call[acp.PromptResponse]:
    return Call(_A["session_prompt"], params, acp.PromptResponse)


def set_mode(params: acp.SetSessionModeRequest) -> Call[Json]:
    return Call(_A["session_set_mode"], params, object)


def set_model(params: acp.SetSessionModelRequest) -> Call[Json]:
    return Call(_A["session_set_model"], params, object)


def set_config_option(params: acp.SetSessionConfigOptionRequest) -> Call[Json]:
    return Call(_A["session_set_config_option"], params, object)


def _advertises_load(capabilities: acp.AgentCapabilities) -> bool:
    return capabilities.load_session


def _advertises_list(capabilities: acp.AgentCapabilities) -> bool:
    return capabilities.session_capabilities.list is not None


_CAPABILITY_OF = {_A["session_load"]: _advertises_load, _A["session_list"]: _advertises_list}


def require_capability(capabilities: acp.AgentCapabilities, method: str) -> None:
    """Raise `AgentRequestFailed` (``unsupported``) for an optional method the agent did
    not advertise in ``initialize``."""
    advertised = _CAPABILITY_OF.get(method)
    if advertised is not None and not advertised(capabilities):
        raise AgentRequestFailed(
            f"the agent does not advertise {method}", method=method, code=METHOD_NOT_FOUND
        )


_BLOCK_CAPABILITY = {
    acp.ImageContent: "image",
    acp.AudioContent: "audio",
    acp.EmbeddedResource: "embedded_context",
}


def check_prompt(capabilities: acp.AgentCapabilities, blocks: Sequence[acp.ContentBlock]) -> None:
    """Raise `AgentRequestFailed` for a block the agent's ``promptCapabilities`` do not
    allow (text and resource links every agent takes)."""
    allowed = capabilities.prompt_capabilities
    for block in blocks:
        name = _BLOCK_CAPABILITY.get(type(block))
        if name is not None and not getattr(allowed, name):
            raise AgentRequestFailed(
                f"the agent does not accept {type(block).__name__} in prompts "
                f"(promptCapabilities.{name})",
                method=_A["session_prompt"],
                code=INVALID_PARAMS,
            )


SessionPhase = Literal["idle", "prompting", "cancelling"]


class AcpSessionState:
    """One session's ordering rules: one turn at a time, and ``session/cancel`` only
    while a turn runs (once: a second cancel is not sent again)."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.phase: SessionPhase = "idle"

    def begin_turn(self) -> None:
        if self.phase != "idle":
            raise GemwireError(f"session {self.session_id} already has a turn running")
        self.phase = "prompting"

    def cancel(self) -> bool:
        """Whether to send ``session/cancel`` now."""
        if self.phase != "prompting":
            return False
        self.phase = "cancelling"
        return True

    @property
    def cancelling(self) -> bool:
        return self.phase == "cancelling"

    def end_turn(self) -> None:
        self.phase = "idle"


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


class AgentError(msgspec.Struct, frozen=True, kw_only=True):
    """The agent answered one of the client's requests with an error."""

    id: RequestId
    method: str
    error: ErrorObject


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
)


class _Kind(msgspec.Struct, frozen=True):
    sessionUpdate: str | None = None


_notification_decoder = msgspec.json.Decoder(acp.SessionNotification)
_kind_decoder = msgspec.json.Decoder(_Kind)
_decoders = {
    name: msgspec.json.Decoder(typ)
    for name, typ in {**acp.SESSION_UPDATE_TYPES, **REQUEST_TYPES, **RESULT_TYPES}.items()
}


class AcpClientConnection:
    """An ACP client's view of one agent connection; see the module docstring."""

    def __init__(self, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._rpc = JsonRpcConnection(max_line_bytes=max_line_bytes)
        self._result_types: dict[RequestId, type[Any]] = {}

    @property
    def pending(self) -> Mapping[RequestId, str]:
        return self._rpc.pending

    def send_request(self, method: str, params: Any) -> tuple[RequestId, bytes]:
        """An untyped request: its result is typed by `RESULT_TYPES`, else plain JSON."""
        return self._rpc.send_request(method, params)

    def send_call(self, call: Call[Any]) -> tuple[RequestId, bytes]:
        """A typed request: its `AgentResult` holds a ``call.result_type``."""
        request_id, data = self._rpc.send_request(call.method, call.params)
        self._result_types[request_id] = call.result_type
        return request_id, data

    def forget(self, request_id: RequestId) -> None:
        """Stop waiting for a request (given up on); its late answer is a violation."""
        self._rpc.forget(request_id)
        self._result_types.pop(request_id, None)

    def send_notification(self, method: str, params: Any) -> bytes:
        return self._rpc.send_notification(method, params)

    def send_result(self, request_id: RequestId, result: Any) -> bytes:
        return self._rpc.send_result(request_id, result)

    def send_error(self, request_id: RequestId, code: int, message: str, data: Any = None) -> bytes:
        return self._rpc.send_error(request_id, code, message, data)

    def close_pending(self) -> dict[RequestId, str]:
        self._result_types.clear()
        return self._rpc.close_pending()

    def receive_data(self, data: bytes) -> list[AcpItem]:
        """Feed what the agent wrote; ``b""`` means end of stream."""
        items: list[AcpItem] = []
        for message in self._rpc.receive_data(data):
            match message:
                case Notification(method="session/update"):
                    items.append(_session_update(message.params))
                case Notification():
                    params = (
                        None if message.params is None else message.params.decode(errors="replace")
                    )
                    items.append(AgentNotification(method=message.method, params=params))
                case Request():
                    items.append(_request(message))
                case Response():
                    items.extend(_result(message, self._result_types.pop(message.id, None)))
                case ErrorResponse():
                    self._result_types.pop(message.id, None)
                    items.append(
                        AgentError(id=message.id, method=message.method, error=message.error)
                    )
                case _:
                    items.append(message)
        return items


def _session_update(params: bytes | None) -> SessionUpdate | UnknownUpdate:
    raw = (params or b"").decode(errors="replace")
    try:
        notification = _notification_decoder.decode(params or b"null")
        kind = _kind_decoder.decode(notification.update).sessionUpdate
    except DECODE_ERRORS as exc:
        return UnknownUpdate(session_id=None, kind=None, raw=raw, reason=str(exc))
    decoder = _decoders.get(kind or "") if kind in acp.SESSION_UPDATE_TYPES else None
    if kind is None or decoder is None:
        reason = f"unknown session update kind {kind!r}"
        return UnknownUpdate(session_id=notification.session_id, kind=kind, raw=raw, reason=reason)
    try:
        update = decoder.decode(notification.update)
    except DECODE_ERRORS as exc:
        return UnknownUpdate(
            session_id=notification.session_id, kind=kind, raw=raw, reason=str(exc)
        )
    return SessionUpdate(session_id=notification.session_id, kind=kind, update=update)


def _request(message: Request) -> AgentRequest | UnservedRequest:
    if message.method not in REQUEST_TYPES:
        return UnservedRequest(
            id=message.id,
            method=message.method,
            code=METHOD_NOT_FOUND,
            message=f"Method not found: {message.method}",
        )
    try:
        params = _decoders[message.method].decode(message.params or b"null")
    except DECODE_ERRORS as exc:
        return UnservedRequest(
            id=message.id,
            method=message.method,
            code=INVALID_PARAMS,
            message=f"Invalid params: {exc}",
        )
    return AgentRequest(id=message.id, method=message.method, params=params)


_typed_decoders: dict[type[Any], msgspec.json.Decoder[Any]] = {}


def _decoder_for(result_type: type[Any]) -> msgspec.json.Decoder[Any]:
    decoder = _typed_decoders.get(result_type)
    if decoder is None:
        decoder = _typed_decoders[result_type] = msgspec.json.Decoder(result_type)
    return decoder


def _result(message: Response, result_type: type[Any] | None) -> list[AcpItem]:
    if result_type is not None:
        decoder: msgspec.json.Decoder[Any] | None = _decoder_for(result_type)
    else:
        decoder = _decoders.get(message.method) if message.method in RESULT_TYPES else None
    try:
        if decoder is None:
            return [
                AgentResult(
                    id=message.id, method=message.method, result=msgspec.json.decode(message.result)
                )
            ]
        return [
            AgentResult(id=message.id, method=message.method, result=decoder.decode(message.result))
        ]
    except DECODE_ERRORS as exc:
        reason = f"the result of {message.method} does not fit its type: {exc}"
        return [
            ProtocolViolation(reason=reason, line=message.result[:2000].decode(errors="replace")),
            AgentError(
                id=message.id,
                method=message.method,
                error=ErrorObject(code=INTERNAL_ERROR, message=f"malformed response: {reason}"),
            ),
        ]
