"""`AcpClientConnection`: JSON-RPC messages from an ACP agent in, typed ACP items out."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from gemwire.protocol.acp.calls import Call, R
from gemwire.protocol.acp.items import (
    AcpItem,
    AgentError,
    AgentNotification,
    AgentRequest,
    AgentResult,
    AgentResultValue,
    SessionUpdate,
    UnknownUpdate,
    UnservedRequest,
)
from gemwire.protocol.acp.lenient import lenient
from gemwire.protocol.acp.routes import ROUTES
from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES
from gemwire.protocol.jsonrpc import (
    DECODE_ERRORS,
    ErrorResponse,
    Incoming,
    JsonRpcConnection,
    Notification,
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

__all__ = ("REQUEST_TYPES", "RESULT_TYPES", "AcpClientConnection")

REQUEST_TYPES: dict[str, type[msgspec.Struct]] = {
    method: route.params for method, route in ROUTES.items()
}
"""The agent-to-client requests a client may serve, and their params types (`ROUTES`)."""

_A = acp.AGENT_METHODS
RESULT_TYPES: dict[str, object] = {
    _A["initialize"]: acp.InitializeResponse,
    _A["session_new"]: acp.NewSessionResponse,
    _A["session_load"]: acp.LoadSessionResponse,
    _A["session_resume"]: acp.ResumeSessionResponse,
    _A["session_fork"]: acp.ForkSessionResponse,
    _A["session_list"]: acp.ListSessionsResponse,
    _A["session_prompt"]: acp.PromptResponse,
}
"""Result types of the client's requests; the others' results are kept as plain JSON."""


class _Kind(msgspec.Struct, frozen=True):
    sessionUpdate: str | None = None


_notification_decoder = msgspec.json.Decoder(acp.SessionNotification)
_kind_decoder = msgspec.json.Decoder(_Kind)
_update_decoder = msgspec.json.Decoder(acp.update.SessionUpdate)


_decoders: dict[object, msgspec.json.Decoder[AgentResultValue]] = {}


def _decoder_for(typ: object) -> msgspec.json.Decoder[AgentResultValue]:
    """The decoder of a result type (a `Call`'s, `RESULT_TYPES`', or ``object``)."""
    decoder = _decoders.get(typ)
    if decoder is None:
        decoder = _decoders[typ] = msgspec.json.Decoder(typ)
    return decoder


class AcpClientConnection:
    """An ACP client's view of one agent connection; see the module docstring."""

    def __init__(self, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._rpc = JsonRpcConnection(max_line_bytes=max_line_bytes)
        self._result_types: dict[RequestId, object] = {}

    @property
    def pending(self) -> Mapping[RequestId, str]:
        return self._rpc.pending

    def send_request(self, method: str, params: object) -> tuple[RequestId, bytes]:
        """An untyped request: its result is typed by `RESULT_TYPES`, else plain JSON."""
        return self._rpc.send_request(method, params)

    def send_call(self, call: Call[R]) -> tuple[RequestId, bytes]:
        """A typed request: its `AgentResult` holds a ``call.result_type``."""
        request_id, data = self._rpc.send_request(call.method, call.params)
        self._result_types[request_id] = call.result_type
        return request_id, data

    def forget(self, request_id: RequestId) -> None:
        """Stop waiting for a request (given up on); its late answer is a violation."""
        self._rpc.forget(request_id)
        self._result_types.pop(request_id, None)

    def send_notification(self, method: str, params: object) -> bytes:
        return self._rpc.send_notification(method, params)

    def send_result(self, request_id: RequestId, result: object) -> bytes:
        return self._rpc.send_result(request_id, result)

    def send_error(
        self, request_id: RequestId, code: int, message: str, data: object = None
    ) -> bytes:
        return self._rpc.send_error(request_id, code, message, data)

    def close_pending(self) -> dict[RequestId, str]:
        self._result_types.clear()
        return self._rpc.close_pending()

    def receive_data(self, data: bytes) -> list[AcpItem]:
        """Feed what the agent wrote; ``b""`` means end of stream."""
        return self._items(self._rpc.receive_data(data))

    def receive_message(self, data: bytes) -> list[AcpItem]:
        """Feed one whole JSON-RPC message (a channel that frames messages itself)."""
        return self._items(self._rpc.receive_message(data))

    def _items(self, messages: list[Incoming]) -> list[AcpItem]:
        items: list[AcpItem] = []
        for message in messages:
            match message:
                case Notification(method="session/update"):
                    items.extend(_session_update(message.params))
                case Notification():
                    params = (
                        None if message.params is None else message.params.decode(errors="replace")
                    )
                    items.append(AgentNotification(method=message.method, params=params))
                case Request():
                    items.extend(_request(message))
                case Response():
                    items.extend(_result(message, self._result_types.pop(message.id, None)))
                case ErrorResponse():  # an `AgentError` as it is
                    self._result_types.pop(message.id, None)
                    items.append(message)
                case _:
                    items.append(message)
        return items


def _session_update(params: bytes | None) -> list[AcpItem]:
    # The common case in two decodes: a known kind whose update fits (its tag picks the
    # variant; the tags are `KINDS`). Anything else takes the long way, which says why.
    try:
        notification = _notification_decoder.decode(params or b"null")
        update = _update_decoder.decode(notification.update)
    except DECODE_ERRORS:
        return _session_update_checked(params)
    return [SessionUpdate(session_id=notification.session_id, update=update)]


def _session_update_checked(params: bytes | None) -> list[AcpItem]:
    raw = (params or b"").decode(errors="replace")
    try:
        notification = _notification_decoder.decode(params or b"null")
        kind = _kind_decoder.decode(notification.update).sessionUpdate
    except DECODE_ERRORS as exc:
        return [UnknownUpdate(session_id=None, kind=None, raw=raw, reason=str(exc))]
    session_id = notification.session_id
    if kind is None or kind not in acp.update.KINDS:
        reason = f"unknown session update kind {kind!r}"
        return [UnknownUpdate(session_id=session_id, kind=kind, raw=raw, reason=reason)]
    data = bytes(notification.update)
    try:
        return [SessionUpdate(session_id=session_id, update=_update_decoder.decode(data))]
    except DECODE_ERRORS as exc:
        fitted = lenient(acp.update.KINDS[kind], data)
        if fitted is None:  # a required part does not fit
            return [UnknownUpdate(session_id=session_id, kind=kind, raw=raw, reason=str(exc))]
    kept, dropped = fitted
    update = SessionUpdate(session_id=session_id, update=_update_decoder.decode(kept))
    return [*_dropped(f"a {kind} update", dropped, data), update]


def _dropped(what: str, paths: list[str], data: bytes) -> list[ProtocolViolation]:
    """A record of each malformed optional part dropped from ``what`` (`lenient`)."""
    line = data[:2000].decode(errors="replace")
    return [
        ProtocolViolation(reason=f"dropped {path} of {what}: it does not fit its type", line=line)
        for path in paths
    ]


def _request(message: Request) -> list[AcpItem]:
    route = ROUTES.get(message.method)
    if route is None:
        return [
            UnservedRequest(
                id=message.id,
                method=message.method,
                code=METHOD_NOT_FOUND,
                message=f"Method not found: {message.method}",
            )
        ]
    data = message.params or b"null"
    try:
        return [AgentRequest(id=message.id, method=message.method, params=route.decode(data))]
    except DECODE_ERRORS as exc:
        fitted = lenient(route.params, data)
        if fitted is None:  # a required part does not fit
            invalid = f"Invalid params: {exc}"
            return [
                UnservedRequest(
                    id=message.id, method=message.method, code=INVALID_PARAMS, message=invalid
                )
            ]
    kept, dropped = fitted
    request = AgentRequest(id=message.id, method=message.method, params=route.decode(kept))
    return [*_dropped(f"the params of {message.method}", dropped, data), request]


def _result(message: Response, result_type: object) -> list[AcpItem]:
    if result_type is None:  # an untyped request: typed by its method, if known
        result_type = RESULT_TYPES.get(message.method, object)
    try:
        result = _decoder_for(result_type).decode(message.result)
    except DECODE_ERRORS as exc:
        fitted = lenient(result_type, message.result)
        if fitted is not None:  # a malformed optional part: dropped, and said
            kept, dropped = fitted
            result = _decoder_for(result_type).decode(kept)
            return [
                *_dropped(f"the result of {message.method}", dropped, message.result),
                AgentResult(id=message.id, method=message.method, result=result),
            ]
        reason = f"the result of {message.method} does not fit its type: {exc}"
        return [
            ProtocolViolation(reason=reason, line=message.result[:2000].decode(errors="replace")),
            AgentError(
                id=message.id,
                method=message.method,
                error=ErrorObject(code=INTERNAL_ERROR, message=f"malformed response: {reason}"),
            ),
        ]
    return [AgentResult(id=message.id, method=message.method, result=result)]
