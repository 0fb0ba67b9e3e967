"""The remote channels (`WebSocketChannel`, `StreamableHttpChannel`) under `AcpClient`:
against the ACP Python SDK's own ASGI app serving its example echo agent (an
implementation we did not write), and against gemwire's endpoint serving the scripted
agent; each served by uvicorn on 127.0.0.1, the client on both anyio backends."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest
from acp_scripted import ScriptedAgent
from served import ScriptedChannel, endpoint_app, eventually, sdk_echo_app, serve_asgi

from gemwire.errors import AgentNotFound, AuthFailed, PromptTooLarge
from gemwire.events import Event, TurnCompleted
from gemwire.runners.acp import AcpClient, AcpOptions, AgentChannel
from gemwire.runners.acp.http_channel import StreamableHttpChannel
from gemwire.runners.acp.websocket_channel import WebSocketChannel
from gemwire.server.acp_endpoint import AcpEndpoint

pytestmark = pytest.mark.anyio

Channel = Callable[[str], AgentChannel]
CHANNELS: dict[str, Channel] = {
    "ws": lambda host: WebSocketChannel(f"ws://{host}/acp/echo"),
    "http": lambda host: StreamableHttpChannel(f"http://{host}/acp/echo"),
}


@pytest.fixture(scope="module")
def sdk_host() -> Iterator[str]:
    with serve_asgi(sdk_echo_app()) as host:
        yield host


async def _one_turn(channel: AgentChannel, text: str) -> tuple[list[Event], AcpClient]:
    with anyio.fail_after(20):
        async with AcpClient(AcpOptions(), channel=channel) as client:
            session = await client.new_session()
            async with session.prompt(text) as turn:
                events = [event async for event in turn]
    return events, client


def _said(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.type, getattr(e, "text", "") or getattr(e, "answer", "")) for e in events]


@pytest.mark.parametrize("kind", CHANNELS)
async def test_the_sdk_echo_agent_served_by_the_sdk_answers_through_our_channel(
    sdk_host: str, kind: str
) -> None:
    events, client = await _one_turn(CHANNELS[kind](f"{sdk_host}"), "ping over the wire")
    assert _said(events) == [
        ("session_started", ""),
        ("user_message", "ping over the wire"),
        ("message_delta", "ping over the wire"),
        ("turn_completed", "ping over the wire"),
    ]
    assert isinstance(events[-1], TurnCompleted)
    assert events[-1].ok
    assert client.initialize_response is not None
    assert client.initialize_response.protocol_version == 1


async def _permission_turn(agent: ScriptedAgent, session_id: str, params: dict[str, Any]) -> str:
    options = [
        {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
        {"optionId": "no", "name": "Deny", "kind": "reject_once"},
    ]
    call = {"toolCallId": "c1", "title": "write x", "kind": "edit"}
    answer = await agent.request(
        "session/request_permission",
        {"sessionId": session_id, "toolCall": call, "options": options},
    )
    await agent.say(session_id, f"outcome {answer['result']['outcome']['optionId']}")
    return "end_turn"


@pytest.mark.parametrize("kind", CHANNELS)
async def test_our_endpoint_routes_a_permission_round_trip_on_the_session(kind: str) -> None:
    agents: list[ScriptedAgent] = []
    endpoint = AcpEndpoint(lambda name: ScriptedChannel(agents, on_prompt=_permission_turn))
    with serve_asgi(endpoint_app(endpoint)) as host:
        channel = CHANNELS[kind](host)
        with anyio.fail_after(20):
            async with AcpClient(AcpOptions(permissions="all"), channel=channel) as client:
                session = await client.new_session()
                async with session.prompt("go") as turn:
                    events = [event async for event in turn]
    assert [e.type for e in events] == [
        "session_started",
        "user_message",
        "tool_call_started",
        "permission_requested",
        "permission_resolved",
        "message_delta",
        "notice",  # the scripted tool call never reports its end
        "tool_call_finished",
        "turn_completed",
    ]
    assert turn.result.answer == "outcome yes"
    [agent] = agents
    assert [m.get("method") for m in agent.received] == [
        "initialize",
        "session/new",
        "session/prompt",
        None,  # the client's answer to the permission request
    ]


async def _leave(agent: ScriptedAgent, session_id: str, params: dict[str, Any]) -> str:
    await agent.say(session_id, "bye")
    await agent.channel.close(0)
    await anyio.sleep_forever()
    raise AssertionError


@pytest.mark.parametrize(
    ("kind", "why"),
    [
        ("ws", "the agent closed the connection (the agent exited (WebSocket close 1000))"),
        ("http", "the agent closed the connection (the server ended the connection's stream)"),
    ],
)
async def test_an_agent_that_ends_mid_turn_ends_the_turn_crashed_saying_why(
    kind: str, why: str
) -> None:
    endpoint = AcpEndpoint(lambda name: ScriptedChannel(on_prompt=_leave))
    with serve_asgi(endpoint_app(endpoint)) as host:
        events, _ = await _one_turn(CHANNELS[kind](host), "go")
        await eventually(lambda: not endpoint.connections)
    assert _said(events)[-2:] == [("message_delta", "bye"), ("turn_completed", "bye")]
    done = events[-1]
    assert isinstance(done, TurnCompleted)
    assert done.error is not None
    assert (done.error.kind, done.error.message) == (
        "crashed",
        f"{why} before answering session/prompt",
    )


@pytest.mark.parametrize("kind", CHANNELS)
async def test_an_unknown_agent_is_agent_not_found(kind: str) -> None:
    def launcher(name: str) -> AgentChannel:
        raise AgentNotFound(f"unknown agent {name!r}")

    with (
        serve_asgi(endpoint_app(AcpEndpoint(launcher))) as host,
        pytest.raises(AgentNotFound) as caught,
    ):
        await _one_turn(CHANNELS[kind](host), "go")
    assert (
        str(caught.value)
        == {
            # httpx-ws closes a refused upgrade's answer unread: its status is what is left
            "ws": f"no ACP agent at ws://{host}/acp/echo (HTTP 404)",
            "http": f"no ACP agent at http://{host}/acp/echo (HTTP 404): unknown agent 'echo'",
        }[kind]
    )


async def _refuse(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        return
    body = b'{"error": {"kind": "unauthorized", "message": "a token is needed"}}'
    prefix = "websocket." if scope["type"] == "websocket" else ""
    if prefix:
        await receive()
    start = {"type": f"{prefix}http.response.start", "status": 401, "headers": []}
    await send(start)
    await send({"type": f"{prefix}http.response.body", "body": body})


@pytest.mark.parametrize("kind", CHANNELS)
async def test_a_refused_token_is_auth_failed(kind: str) -> None:
    with serve_asgi(_refuse) as host, pytest.raises(AuthFailed) as caught:
        await _one_turn(CHANNELS[kind](host), "go")
    detail = "" if kind == "ws" else ": a token is needed"
    assert str(caught.value).endswith(f"refused the token (HTTP 401){detail}")


@pytest.mark.parametrize("kind", CHANNELS)
async def test_an_endpoint_nobody_listens_on_is_agent_not_found(kind: str) -> None:
    with serve_asgi(_refuse) as host:
        pass  # the port is free again
    with pytest.raises(AgentNotFound) as caught:
        await _one_turn(CHANNELS[kind](host), "go")
    scheme = "ws" if kind == "ws" else "http"
    assert str(caught.value).startswith(
        f"cannot reach the ACP endpoint {scheme}://{host}/acp/echo: "
    )


@pytest.mark.parametrize("channel_type", [WebSocketChannel, StreamableHttpChannel])
async def test_a_message_over_the_line_cap_is_refused_before_it_is_sent(
    channel_type: type[WebSocketChannel | StreamableHttpChannel],
) -> None:
    channel = channel_type("http://127.0.0.1:9/acp/echo", max_message_bytes=64)
    with pytest.raises(PromptTooLarge) as caught:
        await channel.send(b"x" * 65 + b"\n")
    assert str(caught.value) == "a message of 65 bytes is over the 64 a remote agent takes"


@pytest.mark.parametrize("kind", CHANNELS)
async def test_without_the_remote_extra_the_channel_says_what_to_install(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "httpx_ws", None)
    with pytest.raises(AgentNotFound) as caught:
        await _one_turn(CHANNELS[kind]("127.0.0.1:9"), "go")
    assert str(caught.value) == (
        "a remote ACP agent needs httpx and httpx-ws: pip install 'gemwire[remote]'"
    )
