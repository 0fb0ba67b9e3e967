"""What the ends of ACP over the network route by (`protocol.acp.remote.peek`): read from
any bytes without raising, exact for the messages ACP sends."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from gemwire.protocol.acp.remote import (
    Peeked,
    carries_session_header,
    invalid_params,
    parse_error,
    peek,
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_peek_without_raising(data: bytes) -> None:
    seen = peek(data)
    assert seen is None or isinstance(seen, Peeked)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["id", "method", "params", "result", "x"]), json_values))
def test_any_json_object_peeks_and_anything_else_does_not(message: dict[str, object]) -> None:
    assert peek(json.dumps(message).encode()) is not None
    assert peek(json.dumps([message]).encode()) is None


@pytest.mark.parametrize(
    ("message", "key", "method", "session_id"),
    [
        ({"id": 3, "method": "session/prompt", "params": {"sessionId": "s"}}, b"3", "session/prompt", "s"),
        ({"id": "a", "result": {"sessionId": "t", "modes": None}}, b'"a"', None, "t"),
        ({"method": "session/update", "params": {"sessionId": "u", "update": {}}}, None, "session/update", "u"),
        ({"id": None, "error": {"code": -32700, "message": "x"}}, None, None, None),
        ({"id": 4, "error": {"code": -32603, "message": "x"}}, b"4", None, None),
        ({"id": 1, "method": "m", "params": [1, 2]}, b"1", "m", None),
        ({"id": 1, "params": {"sessionId": 5}}, None, None, None),  # odd, still JSON: routed nowhere special
    ],
)  # fmt: skip
def test_the_routing_fields(
    message: dict[str, object], key: bytes | None, method: str | None, session_id: str | None
) -> None:
    assert peek(json.dumps(message).encode()) == Peeked(
        key=key, method=method, session_id=session_id, failed="error" in message
    )


def test_only_methods_on_an_open_session_carry_its_header() -> None:
    assert [m for m in ("session/new", "session/load", "session/prompt", "session/cancel", "session/list", None) if carries_session_header(m)] == ["session/prompt", "session/cancel"]  # fmt: skip


def test_the_parse_error_is_json_rpc() -> None:
    assert json.loads(parse_error("bad")) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error: bad"},
    }


@pytest.mark.parametrize("key", [b"7", b'"a-7"', b"12345678901234567890123"])
def test_invalid_params_answers_the_request_by_its_id_as_written(key: bytes) -> None:
    answer = invalid_params(key, "cwd '/x' is outside")
    assert answer == (
        b'{"jsonrpc":"2.0","id":' + key + b',"error":{"code":-32602,'
        b'"message":"Invalid params: cwd \'/x\' is outside"}}'
    )
    assert peek(answer) == Peeked(key=key, method=None, session_id=None, failed=True)
