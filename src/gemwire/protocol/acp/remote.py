"""ACP over the network, sans-IO: what both ends of the transport RFD route messages by.

The RFD (Streamable HTTP and WebSocket on one endpoint, as the ACP Python SDK 0.12.1
speaks it) names a connection with the ``Acp-Connection-Id`` header, minted when the
client POSTs ``initialize``, and a session with ``Acp-Session-Id``. Over HTTP the
agent's messages go out on SSE streams: one per connection, one per session. A message
is routed by its ``id``, its ``method`` and the ``sessionId`` of its ``params`` (or of
a ``result`` that opens a session); `peek` reads those and nothing else, so a message is
passed on as it came.

    >>> seen = peek(b'{"jsonrpc":"2.0","id":7,"method":"session/prompt",'
    ...             b'"params":{"sessionId":"s1","prompt":[]}}')
    >>> seen.request, seen.key, seen.session_id, carries_session_header(seen.method)
    (True, b'7', 's1', True)
    >>> peek(b'{"jsonrpc":"2.0","id":"7","result":{"sessionId":"s2"}}').session_id
    's2'
    >>> peek(b'[1, 2]') is None, peek(b'{"id": 1') is None, peek(b'{"a": "\\xff"}') is None
    (True, True, True)
    >>> peek(b'{"jsonrpc":"2.0","id":3,"method":["session/new"]}')
    Peeked(key=b'3', method=None, session_id=None, failed=False, invalid=True)
    >>> is_batch(b' [{"jsonrpc":"2.0","method":"a"}]'), is_batch(b'[1')
    (True, False)
"""

from __future__ import annotations

import msgspec

from gemwire.protocol._undecodable import UNDECODABLE

__all__ = (
    "CONNECTION_ID_HEADER",
    "SESSION_ID_HEADER",
    "Peeked",
    "attaches_session",
    "carries_session_header",
    "invalid_params",
    "invalid_request",
    "is_batch",
    "parse_error",
    "peek",
    "with_connection_id",
)

CONNECTION_ID_HEADER = "Acp-Connection-Id"
SESSION_ID_HEADER = "Acp-Session-Id"

# The methods on a session that exists: a POST of one carries Acp-Session-Id and its
# answer comes on that session's stream. Those that open a session (session/new, /load)
# answer on the connection's stream, which the client has open; those that attach one
# (load, resume, fork: its params name a session) carry the header too, as the RFD's
# resume flow has it, but a server takes them without.
_ATTACHING = frozenset({"session/load", "session/resume", "session/fork"})
_SESSION_SCOPED = frozenset(
    {
        "session/set_mode",
        "session/set_config_option",
        "session/prompt",
        "session/cancel",
        "session/close",
    }
)


class _SessionRef(msgspec.Struct):
    session_id: str | None = msgspec.field(default=None, name="sessionId")


# Whatever else params and result may be: one decode checks the whole message.
_Part = _SessionRef | list[msgspec.Raw] | str | int | float | bool | None


class _Message(msgspec.Struct):
    id: msgspec.Raw = msgspec.Raw(b"")
    method: str | None = None
    params: _Part = None
    result: _Part = None
    error: msgspec.Raw = msgspec.Raw(b"")


_decoder = msgspec.json.Decoder(_Message)


class Peeked(msgspec.Struct, frozen=True, kw_only=True):
    """What a JSON-RPC message is routed by."""

    key: bytes | None
    """Its ``id`` as written (``b'7'``, ``b'"7"'``): how an answer finds its request."""
    method: str | None
    session_id: str | None
    """The ``sessionId`` of its params, else of its result."""
    failed: bool = False
    """An error answer."""
    invalid: bool = False
    """An object whose ``method`` is not a string: no JSON-RPC message (`invalid_request`
    answers it, ``key`` its ``id`` when that is one)."""

    @property
    def request(self) -> bool:
        return self.key is not None and self.method is not None

    @property
    def response(self) -> bool:
        return self.key is not None and self.method is None


def peek(data: bytes) -> Peeked | None:
    """The routing fields of one message; ``None`` unless it is a JSON object (the whole
    of it is checked, so a message that peeks is valid JSON)."""
    try:
        data.decode()  # fields peek skips are not checked for UTF-8 by msgspec
        message = _decoder.decode(data)
    except msgspec.ValidationError:
        # An object of an odd shape (a numeric method, ...): valid JSON routes nowhere
        # in particular; the agent answers it.
        try:
            whole = msgspec.json.decode(data)
        except UNDECODABLE:
            return None
        if not isinstance(whole, dict):
            return None
        if "method" in whole and not isinstance(whole["method"], str):
            raw = whole.get("id")
            valid = isinstance(raw, str | int) and not isinstance(raw, bool)
            key = msgspec.json.encode(raw) if valid else None
            return Peeked(key=key, method=None, session_id=None, invalid=True)
        return Peeked(key=None, method=None, session_id=None)
    except UNDECODABLE:
        return None
    raw_id = bytes(message.id)
    session_id = None
    for part in (message.params, message.result):
        if isinstance(part, _SessionRef) and part.session_id is not None:
            session_id = part.session_id
            break
    return Peeked(
        key=raw_id if raw_id not in (b"", b"null") else None,
        method=message.method,
        session_id=session_id,
        failed=bool(message.error),
    )


def attaches_session(method: str | None) -> bool:
    """Whether ``method`` attaches a session that exists, named in its params
    (``session/load``, ``session/resume``, ``session/fork``): the session's stream is
    open from the request on (the RFD's resume flow opens it first), and its answer
    comes on the connection's stream."""
    return method in _ATTACHING


def is_batch(data: bytes) -> bool:
    """Whether ``data`` is a JSON array (a JSON-RPC batch, which ACP does not use)."""
    if not data.lstrip().startswith(b"["):
        return False
    try:
        msgspec.json.decode(data)
    except UNDECODABLE:
        return False
    return True


def carries_session_header(method: str | None) -> bool:
    """Whether a POST of ``method`` carries ``Acp-Session-Id`` (a method on an open session)."""
    return method in _SESSION_SCOPED


def parse_error(reason: str) -> bytes:
    """The JSON-RPC answer to a message that is not JSON (id null, code -32700).

    >>> parse_error("not JSON")
    b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: not JSON"}}'
    """
    error = {"code": -32700, "message": f"Parse error: {reason}"}
    return msgspec.json.encode({"jsonrpc": "2.0", "id": None, "error": error})


def invalid_request(key: bytes | None, reason: str) -> bytes:
    """The JSON-RPC answer to an object that is no JSON-RPC message (code -32600; id
    null when it has none).

    >>> invalid_request(b'3', "method must be a string")
    b'{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid Request: method must be a string"}}'
    """
    error = {"code": -32600, "message": f"Invalid Request: {reason}"}
    raw = msgspec.Raw(key) if key is not None else None
    return msgspec.json.encode({"jsonrpc": "2.0", "id": raw, "error": error})


def with_connection_id(answer: bytes, connection_id: str) -> bytes:
    """``initialize``'s answer with ``connectionId`` in its result, as the RFD's flow
    shows it (an error answer, or a result that is no object, as it came).

    >>> with_connection_id(b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}', "c1")
    b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"connectionId":"c1"}}'
    """
    try:
        message = msgspec.json.decode(answer)
    except UNDECODABLE:
        return answer
    result = message.get("result") if isinstance(message, dict) else None
    if not isinstance(result, dict):
        return answer
    result["connectionId"] = connection_id
    return msgspec.json.encode(message)


def invalid_params(key: bytes, reason: str) -> bytes:
    """The JSON-RPC answer to the request whose ``id`` is ``key`` (as written) when its
    params are refused before the agent sees them (code -32602).

    >>> invalid_params(b'"a"', "cwd is missing")
    b'{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"Invalid params: cwd is missing"}}'
    """
    error = {"code": -32602, "message": f"Invalid params: {reason}"}
    return msgspec.json.encode({"jsonrpc": "2.0", "id": msgspec.Raw(key), "error": error})
