"""Typed inbound ACP: every valid ``session/update`` decodes into its variant of the tagged
union and round-trips, and the reducer maps it by type; the agent's requests go through one
table of typed routes."""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from kit.wire_strategies import of_type

from gemwire._normalize.acp import AcpNormalizer
from gemwire.events import (
    MessageDelta,
    Notice,
    PlanRemoved,
    PlanUpdated,
    SessionMessage,
    SessionUpdated,
    SubagentUpdated,
    ThoughtDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolCallUpdated,
    Unknown,
    UserMessage,
)
from gemwire.protocol.acp import (
    REQUEST_TYPES,
    ROUTES,
    AcpClientConnection,
    AgentRequest,
    ProtocolViolation,
    SessionUpdate,
    UnknownUpdate,
    UnservedRequest,
)
from gemwire.wire import acp

A, S = "acp:x", "s"

_CHUNK_EVENTS = {
    "user_message_chunk": UserMessage,
    "agent_message_chunk": MessageDelta,
    "agent_thought_chunk": ThoughtDelta,
}
_FIRST_EVENT: dict[str, tuple[type, ...]] = {
    **{kind: (event, Unknown) for kind, event in _CHUNK_EVENTS.items()},
    "tool_call": (ToolCallStarted,),
    "tool_call_update": (ToolCallStarted,),
    "plan": (PlanUpdated,),
    "plan_update": (PlanUpdated,),
    "plan_removed": (PlanRemoved,),
    "notice": (Notice,),
    "subagent_update": (SubagentUpdated,),
    "session_message": (SessionMessage,),
    "session_message_chunk": (SessionMessage,),
}
"""The event each kind starts with; every other kind is a ``session_update`` as sent."""


updates = st.sampled_from(sorted(acp.update.KINDS)).flatmap(
    lambda kind: of_type(acp.update.KINDS[kind])
)
"""Any update of a kind of the schema, as an agent would send it (its tag first)."""


def _frame(update: object) -> bytes:
    params = {"sessionId": S, "update": update}
    return msgspec.json.encode({"jsonrpc": "2.0", "method": "session/update", "params": params})


def test_every_kind_has_one_variant_of_its_type() -> None:
    assert set(acp.update.KINDS) == set(acp.SESSION_UPDATE_TYPES)
    for kind, variant in acp.update.KINDS.items():
        assert issubclass(variant, acp.SESSION_UPDATE_TYPES[kind])
        assert acp.update.KIND_OF[variant] == kind
        assert variant.__struct_config__.tag == kind


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(update=updates)
def test_any_valid_update_round_trips_through_decode_and_normalize(update: object) -> None:
    frame = _frame(update)
    sent = json.loads(frame)["params"]["update"]

    [item] = AcpClientConnection().receive_message(frame)

    assert isinstance(item, SessionUpdate)
    assert item.kind == sent["sessionUpdate"]
    assert type(item.update) is acp.update.KINDS[item.kind]
    assert json.loads(msgspec.json.encode(item.update)) == sent
    normalizer = AcpNormalizer(agent=A, session_id=S)
    events = normalizer.feed(item)
    assert events
    assert {(e.agent, e.session_id) for e in events} == {(A, S)}
    first = events[0]
    expected = _FIRST_EVENT.get(item.kind, (SessionUpdated,))
    assert isinstance(first, expected)
    if isinstance(first, SessionUpdated) and first.origin is msgspec.UNSET:
        untagged = {k: v for k, v in sent.items() if k != "sessionUpdate"}
        assert (first.update, first.data) == (item.kind, untagged)
    if item.kind in _CHUNK_EVENTS and isinstance(first, _CHUNK_EVENTS[item.kind]):
        assert getattr(first, "text", None) == sent["content"]["text"]
    if item.kind == "tool_call_update" or item.kind == "tool_call":
        rest = (ToolCallUpdated, ToolCallFinished, ToolCallStarted)
        assert all(isinstance(e, rest) for e in events)


def test_the_route_table_is_the_request_table() -> None:
    methods = set(acp.CLIENT_METHODS.values()) - {"session/update", "elicitation/complete"}
    assert set(ROUTES) == methods == set(REQUEST_TYPES)
    for method, route in ROUTES.items():
        assert REQUEST_TYPES[method] is route.params


def test_a_request_decodes_by_its_route_and_an_unknown_method_is_unserved() -> None:
    conn = AcpClientConnection()
    asked = conn.receive_message(
        b'{"jsonrpc":"2.0","id":4,"method":"terminal/kill",'
        b'"params":{"sessionId":"s","terminalId":"t"}}'
    )
    unknown = conn.receive_message(b'{"jsonrpc":"2.0","id":5,"method":"nes/suggest"}')
    assert asked == [
        AgentRequest(
            id=4,
            method="terminal/kill",
            params=acp.KillTerminalRequest(session_id="s", terminal_id="t"),
        )
    ]
    assert unknown == [
        UnservedRequest(
            id=5, method="nes/suggest", code=-32601, message="Method not found: nes/suggest"
        )
    ]


@pytest.mark.anyio
async def test_a_route_refuses_params_of_another_method() -> None:
    params = acp.ReadTextFileRequest(session_id="s", path="/a")
    with pytest.raises(TypeError, match="ReadTextFileRequest is not KillTerminalRequest"):
        await ROUTES["terminal/kill"].serve(object(), 1, params)  # type: ignore[arg-type]


def test_a_malformed_optional_part_of_an_update_or_request_is_dropped_and_said() -> None:
    conn = AcpClientConnection()
    update = (
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
        b'{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","locations":"nowhere"}}}'
    )
    read = (
        b'{"jsonrpc":"2.0","id":2,"method":"fs/read_text_file",'
        b'"params":{"sessionId":"s","path":"/a","line":"ten"}}'
    )
    violation, kept = conn.receive_message(update)
    assert isinstance(violation, ProtocolViolation)
    assert violation.reason == (
        "dropped $.locations of a tool_call update: it does not fit its type"
    )
    assert kept == SessionUpdate(
        session_id="s", update=acp.update.ToolCall(tool_call_id="t", title="x")
    )
    violation, asked = conn.receive_message(read)
    assert isinstance(violation, ProtocolViolation)
    assert violation.reason == (
        "dropped $.line of the params of fs/read_text_file: it does not fit its type"
    )
    assert asked == AgentRequest(
        id=2, method="fs/read_text_file", params=acp.ReadTextFileRequest(session_id="s", path="/a")
    )


def test_a_malformed_required_part_still_fails_the_update_and_the_request() -> None:
    conn = AcpClientConnection()
    [update] = conn.receive_message(
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
        b'{"sessionUpdate":"tool_call","toolCallId":7,"title":"x"}}}'
    )
    [request] = conn.receive_message(
        b'{"jsonrpc":"2.0","id":3,"method":"fs/read_text_file","params":{"sessionId":"s"}}'
    )
    assert isinstance(update, UnknownUpdate)
    assert update.reason == "Expected `str`, got `int` - at `$.toolCallId`"
    assert request == UnservedRequest(
        id=3,
        method="fs/read_text_file",
        code=-32602,
        message="Invalid params: Object missing required field `path`",
    )
