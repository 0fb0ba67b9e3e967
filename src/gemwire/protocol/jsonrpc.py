"""JSON-RPC 2.0 over newline-delimited JSON, sans-IO: both directions, one peer.

`JsonRpcConnection` frames bytes into messages (`LineBuffer`, so a line over the cap is
skipped, never buffered whole), sorts them into requests, notifications and responses,
allocates the ids of outgoing requests and keeps the table of requests still waiting for
an answer. It does no I/O: ``receive_data`` takes what the peer wrote and ``send_*``
return the bytes to write.

Nothing the peer sends raises. What breaks the protocol comes out as a
`ProtocolViolation` record and the stream goes on; a response that cannot be read but
names a pending id still answers that request (as an error), so no caller waits forever.
A message holding lone surrogates (``"\\ud83d"``: Node writes half an emoji so) is read with
U+FFFD for each, after a `LoneSurrogates` record that says so.

    >>> conn = JsonRpcConnection()
    >>> request_id, data = conn.send_request("initialize", {"protocolVersion": 1})
    >>> data
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\\n'
    >>> conn.receive_data(b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}\\n')
    [Response(id=0, method='initialize', result=b'{"protocolVersion":1}')]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
from msgspec import UNSET

from gemwire.protocol._lone_surrogates import LoneSurrogates, repaired
from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES, LineBuffer, OversizedLine
from gemwire.wire.jsonrpc import INTERNAL_ERROR, ErrorObject, Message, RequestId

__all__ = (
    "DECODE_ERRORS",
    "ErrorResponse",
    "Incoming",
    "JsonRpcConnection",
    "LoneSurrogates",
    "Notification",
    "OversizedLine",
    "ProtocolViolation",
    "Request",
    "Response",
)

_PREVIEW = 2000

DECODE_ERRORS = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)
"""What decoding a peer's bytes can raise: bad JSON or shape, invalid UTF-8 inside a
string (msgspec checks it only when it makes a ``str``), nesting past the recursion limit."""


class Request(msgspec.Struct, frozen=True, kw_only=True):
    """The peer calls a method of ours and waits for the answer."""

    id: RequestId
    method: str
    params: bytes | None
    """Raw JSON, ``None`` when absent."""


class Notification(msgspec.Struct, frozen=True, kw_only=True):
    method: str
    params: bytes | None


class Response(msgspec.Struct, frozen=True, kw_only=True):
    """The result of one of our requests; ``method`` is the one we called."""

    id: RequestId
    method: str
    result: bytes


class ErrorResponse(msgspec.Struct, frozen=True, kw_only=True):
    id: RequestId
    method: str
    error: ErrorObject


class ProtocolViolation(msgspec.Struct, frozen=True, kw_only=True):
    """A line that is not a JSON-RPC message we can use; ``line`` is its start."""

    reason: str
    line: str


Incoming = (
    Request
    | Notification
    | Response
    | ErrorResponse
    | ProtocolViolation
    | OversizedLine
    | LoneSurrogates
)

_decoder = msgspec.json.Decoder(Message)
_error_decoder = msgspec.json.Decoder(ErrorObject)


class _Outgoing(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    jsonrpc: str
    id: RequestId | msgspec.UnsetType = UNSET
    method: str | msgspec.UnsetType = UNSET
    params: Any = UNSET
    result: Any = UNSET
    error: ErrorObject | msgspec.UnsetType = UNSET


_encoder = msgspec.json.Encoder()


class JsonRpcConnection:
    """One JSON-RPC peer over a byte stream; see the module docstring."""

    def __init__(self, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._lines = LineBuffer(max_line_bytes)
        self._max_line_bytes = max_line_bytes
        self._next_id = 0
        self._pending: dict[RequestId, str] = {}

    @property
    def pending(self) -> Mapping[RequestId, str]:
        """Our requests still waiting for an answer: id -> method."""
        return self._pending

    def send_request(self, method: str, params: Any = UNSET) -> tuple[RequestId, bytes]:
        request_id = self._next_id
        self._next_id += 1
        self._pending[request_id] = method
        return request_id, self._encode(
            _Outgoing(jsonrpc="2.0", id=request_id, method=method, params=params)
        )

    def send_notification(self, method: str, params: Any = UNSET) -> bytes:
        return self._encode(_Outgoing(jsonrpc="2.0", method=method, params=params))

    def send_result(self, request_id: RequestId, result: Any) -> bytes:
        return self._encode(_Outgoing(jsonrpc="2.0", id=request_id, result=result))

    def send_error(self, request_id: RequestId, code: int, message: str, data: Any = None) -> bytes:
        error = ErrorObject(code=code, message=message, data=data)
        return self._encode(_Outgoing(jsonrpc="2.0", id=request_id, error=error))

    def forget(self, request_id: RequestId) -> None:
        """Stop waiting for a request (its answer, if it comes, is then a violation)."""
        self._pending.pop(request_id, None)

    def close_pending(self) -> dict[RequestId, str]:
        """The peer is gone: every request still waiting, which will never be answered."""
        pending, self._pending = self._pending, {}
        return pending

    def receive_data(self, data: bytes) -> list[Incoming]:
        """Feed what the peer wrote; ``b""`` means end of stream."""
        lines = self._lines.feed(data) if data else self._lines.close()
        out: list[Incoming] = []
        for line in lines:
            if isinstance(line, OversizedLine):
                out.append(line)
            elif line.strip():
                out.extend(self._message(line))
        return out

    def receive_message(self, data: bytes) -> list[Incoming]:
        """Feed one whole message, from a transport that frames messages itself (a
        WebSocket, an in-memory channel); the line cap holds for it too.

        >>> JsonRpcConnection(max_line_bytes=8).receive_message(b'{"jsonrpc":"2.0"}')
        [OversizedLine(size=17, limit=8)]
        """
        if len(data) > self._max_line_bytes:
            return [OversizedLine(size=len(data), limit=self._max_line_bytes)]
        return self._message(data) if data.strip() else []

    @staticmethod
    def _encode(message: _Outgoing) -> bytes:
        return _encoder.encode(message) + b"\n"

    def _message(self, line: bytes) -> list[Incoming]:
        try:
            message = _decoder.decode(line)
        except DECODE_ERRORS as exc:
            fixed = repaired(line)
            if fixed is None:
                return [_violation(f"not a JSON-RPC message: {exc}", line)]
            try:
                message = _decoder.decode(fixed[0])
            except DECODE_ERRORS:
                return [_violation(f"not a JSON-RPC message: {exc}", line)]
            return [LoneSurrogates(count=fixed[1]), *self._sorted(message, fixed[0])]
        return self._sorted(message, line)

    def _sorted(self, message: Message, line: bytes) -> list[Incoming]:
        if message.jsonrpc != "2.0":
            return [_violation('not JSON-RPC 2.0 ("jsonrpc" is not "2.0")', line)]
        params = None if message.params is UNSET else bytes(message.params)
        if message.method is not UNSET:
            if message.id is UNSET:
                return [Notification(method=message.method, params=params)]
            if message.id is None:
                return [_violation("a request with a null id", line)]
            return [Request(id=message.id, method=message.method, params=params)]
        return self._response(message, line)

    def _response(self, message: Message, line: bytes) -> list[Incoming]:
        request_id = message.id
        if request_id is UNSET or request_id is None:
            return [_violation("a response without an id", line)]
        method = self._pending.pop(request_id, None)
        if method is None:
            return [_violation(f"a response for unknown request id {request_id!r}", line)]
        result, error_raw = message.result, message.error
        if not isinstance(result, msgspec.UnsetType) and isinstance(error_raw, msgspec.UnsetType):
            return [Response(id=request_id, method=method, result=bytes(result))]
        if not isinstance(error_raw, msgspec.UnsetType) and isinstance(result, msgspec.UnsetType):
            try:
                error = _error_decoder.decode(error_raw)
            except DECODE_ERRORS:
                raw = bytes(error_raw).decode(errors="replace")
                reason = f"an error response whose error is not an error object: {raw}"
            else:
                return [ErrorResponse(id=request_id, method=method, error=error)]
        else:
            reason = "a response with both or neither of result and error"
        # Answer the request anyway, or its caller would wait for ever.
        error = ErrorObject(code=INTERNAL_ERROR, message=f"malformed response: {reason}")
        return [
            _violation(reason, line),
            ErrorResponse(id=request_id, method=method, error=error),
        ]


def _violation(reason: str, line: bytes) -> ProtocolViolation:
    return ProtocolViolation(reason=reason, line=line[:_PREVIEW].decode(errors="replace"))
