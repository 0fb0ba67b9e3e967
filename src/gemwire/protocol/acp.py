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

from collections.abc import Mapping
from typing import Any

import msgspec

from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES
from gemwire.protocol.jsonrpc import (
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
    "AgentError",
    "AgentNotification",
    "AgentRequest",
    "AgentResult",
    "OversizedLine",
    "ProtocolViolation",
    "SessionUpdate",
    "UnknownUpdate",
    "UnservedRequest",
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

    @property
    def pending(self) -> Mapping[RequestId, str]:
        return self._rpc.pending

    def send_request(self, method: str, params: Any) -> tuple[RequestId, bytes]:
        return self._rpc.send_request(method, params)

    def send_notification(self, method: str, params: Any) -> bytes:
        return self._rpc.send_notification(method, params)

    def send_result(self, request_id: RequestId, result: Any) -> bytes:
        return self._rpc.send_result(request_id, result)

    def send_error(self, request_id: RequestId, code: int, message: str, data: Any = None) -> bytes:
        return self._rpc.send_error(request_id, code, message, data)

    def close_pending(self) -> dict[RequestId, str]:
        return self._rpc.close_pending()

    def receive_data(self, data: bytes) -> list[AcpItem]:
        """Feed what the agent wrote; ``b""`` means end of stream."""
        items: list[AcpItem] = []
        for message in self._rpc.receive_data(data):
            match message:
                case Notification(method="session/update"):
                    items.append(_session_update(message.params))
                case Notification():
                    params = None if message.params is None else message.params.decode()
                    items.append(AgentNotification(method=message.method, params=params))
                case Request():
                    items.append(_request(message))
                case Response():
                    items.extend(_result(message))
                case ErrorResponse():
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
    except msgspec.DecodeError as exc:
        return UnknownUpdate(session_id=None, kind=None, raw=raw, reason=str(exc))
    decoder = _decoders.get(kind or "") if kind in acp.SESSION_UPDATE_TYPES else None
    if kind is None or decoder is None:
        reason = f"unknown session update kind {kind!r}"
        return UnknownUpdate(session_id=notification.session_id, kind=kind, raw=raw, reason=reason)
    try:
        update = decoder.decode(notification.update)
    except msgspec.DecodeError as exc:
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
    except msgspec.DecodeError as exc:
        return UnservedRequest(
            id=message.id,
            method=message.method,
            code=INVALID_PARAMS,
            message=f"Invalid params: {exc}",
        )
    return AgentRequest(id=message.id, method=message.method, params=params)


def _result(message: Response) -> list[AcpItem]:
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
    except msgspec.DecodeError as exc:
        reason = f"the result of {message.method} does not fit its type: {exc}"
        return [
            ProtocolViolation(reason=reason, line=message.result[:2000].decode(errors="replace")),
            AgentError(
                id=message.id,
                method=message.method,
                error=ErrorObject(code=INTERNAL_ERROR, message=f"malformed response: {reason}"),
            ),
        ]
