"""JSON-RPC 2.0 over newline-delimited frames, sans-IO: ids, the pending table, both
directions, and what breaks the protocol (reported, never raised)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings, strategies as st
from kit.hostile import texts

from gemwire.protocol.jsonrpc import (
    ErrorResponse,
    JsonRpcConnection,
    Notification,
    OversizedLine,
    ProtocolViolation,
    Request,
    Response,
)
from gemwire.wire.jsonrpc import ErrorObject


def line(message: dict[str, object]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def test_ids_count_up_and_answers_leave_the_pending_table() -> None:
    conn = JsonRpcConnection()
    assert [conn.send_request("m", {})[0] for _ in range(3)] == [0, 1, 2]
    assert dict(conn.pending) == {0: "m", 1: "m", 2: "m"}
    items = conn.receive_data(line({"jsonrpc": "2.0", "id": 1, "result": None}))
    assert items == [Response(id=1, method="m", result=b"null")]
    assert dict(conn.pending) == {0: "m", 2: "m"}
    assert conn.close_pending() == {0: "m", 2: "m"}


def test_requests_notifications_and_errors_both_ways() -> None:
    conn = JsonRpcConnection()
    conn.send_request("session/prompt", {})
    data = b"".join(
        [
            line({"jsonrpc": "2.0", "id": "x", "method": "fs/read_text_file", "params": {"a": 1}}),
            line({"jsonrpc": "2.0", "method": "session/update"}),
            line({"jsonrpc": "2.0", "id": 0, "error": {"code": 429, "message": "slow down"}}),
        ]
    )
    assert conn.receive_data(data) == [
        Request(id="x", method="fs/read_text_file", params=b'{"a": 1}'),
        Notification(method="session/update", params=None),
        ErrorResponse(
            id=0, method="session/prompt", error=ErrorObject(code=429, message="slow down")
        ),
    ]
    assert conn.send_result("x", {"content": ""}) == (
        b'{"jsonrpc":"2.0","id":"x","result":{"content":""}}\n'
    )
    assert conn.send_error(7, -32602, "bad") == (
        b'{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"bad"}}\n'
    )
    assert conn.send_notification("session/cancel", {"sessionId": "s"}) == (
        b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}\n'
    )


def test_what_breaks_the_protocol_is_reported_and_never_raises() -> None:
    conn = JsonRpcConnection()
    conn.send_request("initialize", {})
    conn.send_request("session/new", {})
    items = conn.receive_data(
        b"not json\n[1]\n"
        + line({"jsonrpc": "1.0", "method": "x"})
        + line({"jsonrpc": "2.0", "id": 99, "result": {}})
        + line({"jsonrpc": "2.0", "id": None, "method": "x"})
        + line({"jsonrpc": "2.0", "id": 0, "error": "Resource not found"})
        + line({"jsonrpc": "2.0", "id": 1})
        + b"\n"
    )
    reasons = [i.reason for i in items if isinstance(i, ProtocolViolation)]
    assert len(reasons) == 7
    assert reasons[3] == "a response for unknown request id 99"
    # Unreadable answers to pending requests still answer them, as errors.
    answered = [(i.id, i.method) for i in items if isinstance(i, ErrorResponse)]
    assert answered == [(0, "initialize"), (1, "session/new")]
    assert conn.pending == {}


def test_a_line_over_the_cap_is_skipped_and_the_stream_goes_on() -> None:
    conn = JsonRpcConnection(max_line_bytes=100)
    conn.send_request("m", {})
    items = conn.receive_data(b"x" * 1000 + b"\n" + line({"jsonrpc": "2.0", "id": 0, "result": 1}))
    assert items == [OversizedLine(size=1000, limit=100), Response(id=0, method="m", result=b"1")]


MESSAGES = st.lists(
    st.fixed_dictionaries(
        {"jsonrpc": st.just("2.0"), "method": st.sampled_from(["a", "b/c"])},
        optional={"params": st.dictionaries(texts(max_size=5), texts(max_size=20), max_size=3)},
    ),
    max_size=8,
)


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(MESSAGES, st.data())
def test_any_chunking_gives_the_same_messages(
    messages: list[dict[str, object]], data: st.DataObject
) -> None:
    stream = b"".join(line(m) for m in messages)
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(len(stream) - 1, 1)), max_size=10))))
    conn = JsonRpcConnection()
    items = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        if stream[start:end]:  # b"" is the end of the stream
            items += conn.receive_data(stream[start:end])
    items += conn.receive_data(b"")
    assert all(isinstance(i, Notification) for i in items)
    got = [(i.method, None if i.params is None else json.loads(i.params)) for i in items]  # type: ignore[union-attr]
    assert got == [(m["method"], m.get("params")) for m in messages]
