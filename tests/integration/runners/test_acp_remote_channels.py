"""The remote channels (`WebSocketChannel`, `StreamableHttpChannel`) under `AcpClient`:
against the ACP Python SDK's own ASGI app serving its example echo agent (an
implementation we did not write), and against gemwire's endpoint serving the scripted
agent; each served as `gemwire serve` serves it (hypercorn) on 127.0.0.1, the client on both anyio backends."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from kit.h2_server import self_signed
from kit.served import (
    ScriptedChannel,
    endpoint_app,
    sdk_echo_app,
    serve_asgi,
)
from kit.server import LoadingAgent
from kit.waiting import eventually

from gemwire.errors import AgentNotFound, AuthFailed, PromptTooLarge
from gemwire.events import Event, TurnCompleted
from gemwire.runners.acp import AcpClient, AcpOptions, AgentChannel
from gemwire.runners.acp.http_channel import StreamableHttpChannel
from gemwire.runners.acp.websocket_channel import WebSocketChannel
from gemwire.server.acp_endpoint import AcpEndpoint
from gemwire.testing import ScriptedAgent

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
    # Everything allowed: the SDK's echo agent names no modes, and acts on nothing.
    with anyio.fail_after(20):
        async with AcpClient(AcpOptions(permissions="all"), channel=channel) as client:
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


def _refusing(app: Any) -> Any:
    """``app`` behind a proxy that refuses a POST holding ``refuse me`` (413)."""

    async def proxy(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        messages = [await receive()]
        while messages[-1].get("more_body"):
            messages.append(await receive())
        if b"refuse me" in b"".join(m.get("body", b"") for m in messages):
            body = b'{"error": {"kind": "too_large", "message": "too big"}}'
            await send({"type": "http.response.start", "status": 413, "headers": []})
            await send({"type": "http.response.body", "body": body})
            return

        async def again() -> Any:
            return messages.pop(0) if messages else await receive()

        await app(scope, again, send)

    return proxy


async def _echo(agent: ScriptedAgent, session_id: str, params: dict[str, Any]) -> str:
    await agent.say(session_id, params["prompt"][0]["text"])
    return "end_turn"


async def test_a_refused_http_request_fails_alone_and_the_connection_goes_on() -> None:
    endpoint = AcpEndpoint(lambda name: ScriptedChannel(on_prompt=_echo))
    with serve_asgi(_refusing(endpoint_app(endpoint))) as host, anyio.fail_after(20):
        channel = StreamableHttpChannel(f"http://{host}/acp/echo")
        async with AcpClient(AcpOptions(), channel=channel) as client:
            session = await client.new_session()
            async with session.prompt("refuse me") as refused:
                await refused.wait()
            async with session.prompt("fine") as accepted:
                await accepted.wait()
    assert refused.result.error is not None
    assert refused.result.error.message.endswith(
        "the server refused session/prompt (HTTP 413: too big)"
    )
    assert (accepted.result.ok, accepted.result.answer) == (True, "fine")
    assert channel.http_version == "HTTP/2"  # h2c by prior knowledge


CLOSED_WITH: list[int] = []


async def _big_frame(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "websocket":
        return
    await receive()
    await send({"type": "websocket.accept"})
    await receive()
    await send({"type": "websocket.send", "text": "x" * 2000})
    while (message := await receive())["type"] != "websocket.disconnect":
        pass
    CLOSED_WITH.append(message["code"])


async def test_a_websocket_frame_over_the_cap_closes_the_channel_unheld() -> None:
    CLOSED_WITH.clear()
    with serve_asgi(_big_frame) as host, anyio.fail_after(10):
        async with WebSocketChannel(f"ws://{host}/acp/x", max_message_bytes=1024) as channel:
            await channel.send(b"{}\n")
            assert await channel.receive() == b""
            assert await channel.receive() == b""
            assert channel.close_reason == "the message is too big (WebSocket close 1009)"
        await eventually(lambda: CLOSED_WITH == [1009])  # the server is told why


async def _big_event(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    if scope["method"] == "POST":
        await receive()
        headers = [(b"acp-connection-id", b"c1")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b'{"jsonrpc":"2.0","id":0,"result":{}}'})
        return
    start = {"type": "http.response.start", "status": 200, "headers": []}
    await send(start)
    big = b"data: " + b"x" * 2000 + b"\n\n"
    after = b'data: {"jsonrpc":"2.0","method":"after"}\n\n'
    await send({"type": "http.response.body", "body": big + after})


async def test_an_sse_event_over_the_cap_is_dropped_and_the_next_comes_through() -> None:
    with serve_asgi(_big_event) as host, anyio.fail_after(10):
        async with StreamableHttpChannel(f"http://{host}/acp/x", max_message_bytes=1024) as channel:
            await channel.send(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}\n')
            assert await channel.receive() == b'{"jsonrpc":"2.0","id":0,"result":{}}'
            assert channel.connection_id == "c1"
            assert await channel.receive() == b'{"jsonrpc":"2.0","method":"after"}'
            assert await channel.receive() == b""
            assert channel.close_reason == "the server ended the connection's stream"


class ReplayingAgent(LoadingAgent):
    replay = ("earlier", "before")


@pytest.mark.parametrize("kind", CHANNELS)
async def test_a_loaded_session_replays_and_takes_prompts(kind: str) -> None:
    agents: list[ScriptedAgent] = []
    endpoint = AcpEndpoint(
        lambda name: ScriptedChannel(agents, on_prompt=_echo, agent_type=ReplayingAgent)
    )
    with serve_asgi(endpoint_app(endpoint)) as host, anyio.fail_after(20):
        async with AcpClient(AcpOptions(), channel=CHANNELS[kind](host)) as client:
            session = await client.load_session("old")
            replayed = session.take_events()
            async with session.prompt("again") as turn:
                await turn.wait()
    assert [(e.type, getattr(e, "text", None)) for e in replayed] == [
        ("session_started", None),
        ("user_message", "earlier"),
        ("message_delta", "before"),
    ]
    assert all(getattr(e, "replay", False) for e in replayed[1:])
    assert (turn.result.ok, turn.result.answer) == (True, "again")
    assert [m.get("method") for m in agents[0].received] == [
        "initialize",
        "session/load",
        "session/prompt",
    ]


@pytest.mark.parametrize("scheme", ["http", "https"])
async def test_a_prompt_for_a_session_the_server_does_not_know_fails_alone(
    scheme: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over HTTP/2 (h2c; h2 by ALPN): the session's stream the client opened for it stays
    open and quiet on the server, and neither this answer nor the next waits behind it."""
    endpoint = AcpEndpoint(lambda name: ScriptedChannel(on_prompt=_echo))
    prompt = '{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"%s","prompt":[{"type":"text","text":"hi"}]}}\n'
    tls: dict[str, str] = {}
    if scheme == "https":
        cert, key = self_signed(tmp_path)
        monkeypatch.setenv("SSL_CERT_FILE", cert)  # httpx trusts the test's certificate
        tls = {"ssl_certfile": cert, "ssl_keyfile": key}
    with serve_asgi(endpoint_app(endpoint), **tls) as host, anyio.fail_after(20):
        async with StreamableHttpChannel(f"{scheme}://{host}/acp/x") as channel:
            await channel.send(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}\n')
            assert json.loads(await channel.receive())["id"] == 0
            await channel.send(b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}\n')
            opened = json.loads(await channel.receive())
            assert (opened["id"], opened["result"]["sessionId"]) == (1, "s0")
            await channel.send((prompt % (2, "nope")).encode())
            assert json.loads(await channel.receive()) == {
                "jsonrpc": "2.0",
                "id": 2,
                "error": {
                    "code": -32603,
                    "message": "the server refused session/prompt (HTTP 404: no session 'nope' on this connection)",
                },
            }
            await channel.send((prompt % (3, "s0")).encode())
            assert (
                json.loads(await channel.receive())["params"]["update"]["content"]["text"] == "hi"
            )
            assert json.loads(await channel.receive()) == {
                "jsonrpc": "2.0",
                "id": 3,
                "result": {"stopReason": "end_turn"},
            }
            await channel.close(2)
        assert (channel.close_reason, channel.http_version) == (None, "HTTP/2")
