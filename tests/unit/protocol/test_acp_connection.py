"""The ACP rules, without a process: typed calls, session state, capabilities, and a fuzz of
frames (invalid UTF-8, deep nesting, mutated frames) that must never raise."""

from __future__ import annotations

import json
import re

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from gemwire.errors import AgentRequestFailed, GemwireError
from gemwire.protocol import acp as protocol
from gemwire.protocol.acp import (
    AcpClientConnection,
    AcpSessionState,
    AgentError,
    AgentRequest,
    AgentResult,
    ProtocolViolation,
    SessionUpdate,
    UnknownUpdate,
    UnservedRequest,
)
from gemwire.wire import acp

# Seeds for the fuzz, shaped like the frames gemini --acp 0.61.0 writes (written by hand:
# not a recorded fixture; the point is mutating them).
FRAMES = [
    (
        b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"authMethods":[{"id":"gemini-api-key",'
        b'"name":"Use Gemini API key","description":null}],"agentInfo":{"name":"gemini-cli",'
        b'"title":"Gemini CLI","version":"0.61.0"},"agentCapabilities":{"loadSession":true,'
        b'"promptCapabilities":{"image":true,"audio":true,"embeddedContext":true},'
        b'"mcpCapabilities":{"http":true,"sse":true}}}}'
    ),
    (
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":'
        b'{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello "}}}}'
    ),
    (
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":'
        b'{"sessionUpdate":"tool_call","toolCallId":"write_file-1","status":"in_progress",'
        b'"title":"Writing to hello.txt","content":[{"type":"diff","path":"/w/hello.txt",'
        b'"oldText":"","newText":"hi\\n"}],"locations":[{"path":"/w/hello.txt"}],"kind":"edit"}}}'
    ),
    (
        b'{"jsonrpc":"2.0","id":3,"method":"session/request_permission","params":{"sessionId":"s1",'
        b'"options":[{"optionId":"proceed_once","name":"Allow","kind":"allow_once"}],'
        b'"toolCall":{"toolCallId":"c","status":"pending","title":"t","content":[],"kind":"edit"}}}'
    ),
    b'{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn","_meta":{"quota":{}}}}',
    b'{"jsonrpc":"2.0","id":2,"error":{"code":429,"message":"Resource has been exhausted"}}',
]


def line(message: dict[str, object]) -> bytes:
    return json.dumps(message).encode() + b"\n"


ITEM_TYPES = (
    protocol.SessionUpdate,
    protocol.UnknownUpdate,
    protocol.AgentRequest,
    protocol.UnservedRequest,
    protocol.AgentNotification,
    protocol.AgentResult,
    protocol.AgentError,
    protocol.ProtocolViolation,
    protocol.OversizedLine,
)


def test_a_typed_call_comes_back_typed() -> None:
    conn = AcpClientConnection()
    request = acp.InitializeRequest(
        protocol_version=1, client_capabilities=acp.ClientCapabilities()
    )
    request_id, data = conn.send_call(protocol.initialize(request))
    assert json.loads(data)["method"] == "initialize"
    (item,) = conn.receive_data(FRAMES[0] + b"\n")
    assert isinstance(item, AgentResult)
    assert item.id == request_id
    assert isinstance(item.result, acp.InitializeResponse)
    assert item.result.agent_info is not None
    assert item.result.agent_info.version == "0.61.0"


def test_a_result_that_does_not_fit_its_type_fails_the_request() -> None:
    conn = AcpClientConnection()
    request_id, _ = conn.send_call(
        protocol.prompt(acp.PromptRequest(session_id="s", prompt=[acp.TextContent(text="x")]))
    )
    items = conn.receive_data(b'{"jsonrpc":"2.0","id":0,"result":{"stopReason":7}}\n')
    assert [type(i) for i in items] == [ProtocolViolation, AgentError]
    assert isinstance(items[1], AgentError)
    assert items[1].id == request_id


def test_a_session_runs_one_turn_at_a_time_and_cancels_once() -> None:
    state = AcpSessionState("s")
    assert not state.cancel()  # nothing to cancel
    state.begin_turn()
    with pytest.raises(GemwireError, match="session s already has a turn running"):
        state.begin_turn()
    assert state.cancel()
    assert state.cancelling
    assert not state.cancel()
    state.end_turn()
    assert state.phase == "idle"
    state.begin_turn()


def test_optional_methods_and_prompt_blocks_need_the_capability() -> None:
    bare = acp.AgentCapabilities()
    with pytest.raises(AgentRequestFailed, match="does not advertise session/load") as caught:
        protocol.require_capability(bare, "session/load")
    assert caught.value.unsupported
    protocol.require_capability(acp.AgentCapabilities(load_session=True), "session/load")
    image = acp.ImageContent(data="", mime_type="image/png")
    with pytest.raises(AgentRequestFailed, match=r"promptCapabilities\.image"):
        protocol.check_prompt(bare, [acp.TextContent(text="x"), image])
    allowed = acp.AgentCapabilities(prompt_capabilities=acp.PromptCapabilities(image=True))
    protocol.check_prompt(allowed, [image])


def test_invalid_utf8_and_deep_nesting_are_records() -> None:
    conn = AcpClientConnection()
    lines = [
        FRAMES[1].replace(b"Hello ", b"\xff\xfe"),
        b'{"jsonrpc":"2.0","method":"_x","params":{"a":"\xff"}}',
        b'{"jsonrpc":"2.0","method":"_x","params":' + b"[" * 5000 + b"]" * 5000 + b"}",
        b"{" * 100_000,
        b'{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"\xff"}}',
        b'{"jsonrpc":"2.0","method":"\xff"}',
    ]
    items = conn.receive_data(b"\n".join(lines) + b"\n")
    kinds = [type(i).__name__ for i in items]
    assert kinds == [
        "UnknownUpdate",
        "AgentNotification",
        "ProtocolViolation",
        "ProtocolViolation",
        "UnservedRequest",
        "ProtocolViolation",
    ]
    assert isinstance(items[0], UnknownUpdate)
    assert items[0].session_id == "s1"


def mutate(frame: bytes, data: st.DataObject) -> bytes:
    out = bytearray(frame)
    for _ in range(data.draw(st.integers(1, 8))):
        action = data.draw(st.sampled_from(["flip", "cut", "insert", "nest"]))
        at = data.draw(st.integers(0, max(len(out) - 1, 0)))
        if action == "flip" and out:
            out[at] = data.draw(st.integers(0, 255))
        elif action == "cut":
            del out[at : at + data.draw(st.integers(1, 20))]
        elif action == "insert":
            out[at:at] = data.draw(st.sampled_from([b"\xff", b"\xc3", b'"', b"{", b"[", b"\\u"]))
        else:
            depth = data.draw(st.integers(1, 3000))
            out[at:at] = b"[" * depth + b"]" * depth
    return bytes(out).replace(b"\n", b" ")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_frames_never_raise_and_the_stream_goes_on(data: st.DataObject) -> None:
    conn = AcpClientConnection(max_line_bytes=1 << 16)
    request_id, _ = conn.send_call(
        protocol.new_session(acp.NewSessionRequest(cwd="/w", mcp_servers=[]))
    )
    frames = [mutate(f, data) for f in data.draw(st.lists(st.sampled_from(FRAMES), max_size=6))]
    chunked = b"\n".join(frames) + b"\n" + FRAMES[1] + b"\n"
    items = []
    size = data.draw(st.integers(1, 4096))
    for at in range(0, len(chunked), size):
        items += conn.receive_data(chunked[at : at + size])
    items += conn.receive_data(b"")
    assert all(isinstance(i, ITEM_TYPES) for i in items)
    last = items[-1]
    assert isinstance(last, SessionUpdate)  # the good frame after the bad ones still decodes
    assert msgspec.to_builtins(last.update)["content"]["text"] == "Hello "
    assert request_id in conn.pending or any(getattr(i, "id", None) == request_id for i in items)


@settings(deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    conn = AcpClientConnection()
    conn.send_request("session/prompt", {})
    conn.receive_data(data)
    conn.receive_data(b"")


def test_session_updates_are_typed_by_kind_and_unknown_ones_kept_raw() -> None:
    conn = AcpClientConnection()

    def update(body: dict[str, object]) -> bytes:
        return line(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": "s", "update": body},
            }
        )

    items = conn.receive_data(
        update({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x", "kind": "edit"})
        + update({"sessionUpdate": "teleport", "to": "moon"})
        + update({"sessionUpdate": "plan", "entries": "not a list"})
    )
    assert items[0] == SessionUpdate(
        session_id="s", update=acp.update.ToolCall(tool_call_id="t", title="x", kind="edit")
    )
    assert isinstance(items[1], UnknownUpdate)
    assert (items[1].kind, items[1].reason) == (
        "teleport",
        "unknown session update kind 'teleport'",
    )
    assert json.loads(items[1].raw)["update"] == {"sessionUpdate": "teleport", "to": "moon"}
    assert isinstance(items[2], UnknownUpdate)
    assert items[2].kind == "plan"


def test_agent_requests_are_typed_or_refused() -> None:
    conn = AcpClientConnection()
    items = conn.receive_data(
        line(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "fs/write_text_file",
                "params": {"sessionId": "s", "path": "/a", "content": "x"},
            }
        )
        + line(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "fs/write_text_file",
                "params": {"sessionId": "s"},
            }
        )
        + line({"jsonrpc": "2.0", "id": 2, "method": "mcp/connect", "params": {}})
    )
    assert items[0] == AgentRequest(
        id=0,
        method="fs/write_text_file",
        params=acp.WriteTextFileRequest(session_id="s", path="/a", content="x"),
    )
    assert isinstance(items[1], UnservedRequest)
    assert items[1].code == -32602
    assert items[2] == UnservedRequest(
        id=2, method="mcp/connect", code=-32601, message="Method not found: mcp/connect"
    )


def test_results_are_typed_by_the_method_called() -> None:
    conn = AcpClientConnection()
    conn.send_request("session/prompt", {})
    conn.send_request("session/set_mode", {})
    conn.send_request("session/new", {})
    items = conn.receive_data(
        line(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "result": {"stopReason": "end_turn", "_meta": {"quota": {}}},
            }
        )
        + line({"jsonrpc": "2.0", "id": 1, "result": {}})
        + line({"jsonrpc": "2.0", "id": 2, "result": {"noSessionId": True}})
    )
    assert items[0] == AgentResult(
        id=0,
        method="session/prompt",
        result=acp.PromptResponse(stop_reason="end_turn", meta={"quota": {}}),
    )
    assert items[1] == AgentResult(id=1, method="session/set_mode", result={})
    assert isinstance(items[2], ProtocolViolation)
    assert isinstance(items[3], AgentError)
    assert items[3].method == "session/new"


@pytest.mark.parametrize(("version", "said"), [(0, "version 0;"), (2, "version 2 (the v2 draft);")])
def test_another_protocol_version_is_refused_naming_it(version: int, said: str) -> None:
    protocol.check_protocol_version(acp.InitializeResponse(protocol_version=1))
    with pytest.raises(AgentRequestFailed, match=re.escape(said)) as caught:
        protocol.check_protocol_version(acp.InitializeResponse(protocol_version=version))
    assert (caught.value.method, caught.value.code, caught.value.data) == (
        "initialize",
        -32600,
        {"protocolVersion": version},
    )
