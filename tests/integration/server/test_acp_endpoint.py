"""The ACP endpoint (`AcpEndpoint`) at the wire, on 127.0.0.1 as `gemwire serve` serves it (hypercorn), serving the
scripted agent: exact answers to bad requests, frames that are not JSON, frames over the
cap, a client that never reads, a client that vanishes mid-turn, idle connections (on a
clock the test moves)."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from contextlib import aclosing, asynccontextmanager, contextmanager
from typing import Any, cast

import anyio
import httpx
import pytest
from httpx_ws import AsyncWebSocketSession, WebSocketDisconnect, WebSocketUpgradeError, aconnect_ws
from kit.served import ScriptedChannel, endpoint_app, serve_asgi
from kit.waiting import eventually

from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES
from gemwire.server.acp_endpoint import AcpEndpoint
from gemwire.testing import ScriptedAgent

pytestmark = pytest.mark.anyio

INITIALIZE = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}'
NEW_SESSION = (
    b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}'
)
PARSE_ERROR = (
    '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: '
    'the message is not a JSON-RPC message (a JSON object, UTF-8)"}}'
)
CHUNK = "x" * 10_000
FLOOD = 5_000  # 50 MB, if nothing held the agent back


def prompt(request_id: int = 2) -> bytes:
    params = {"sessionId": "s0", "prompt": [{"type": "text", "text": "go"}]}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": params}
    return json.dumps(message).encode()


class Served:
    """The endpoint, the agents it started and their channels; by default each agent
    floods its answer (`FLOOD` chunks), counting what it got to send."""

    def __init__(self, on_prompt: Any = None) -> None:
        self.agents: list[ScriptedAgent] = []
        self.channels: list[ScriptedChannel] = []
        self.sent = 0
        self._on_prompt = on_prompt or self._flood
        self.endpoint = AcpEndpoint(self._launch, roots=("/",))

    async def _flood(self, agent: ScriptedAgent, session_id: str, params: Any) -> str:
        for _ in range(FLOOD):
            await agent.say(session_id, CHUNK)
            self.sent += 1
        return "end_turn"

    def _launch(self, name: str) -> ScriptedChannel:
        channel = ScriptedChannel(self.agents, on_prompt=self._on_prompt)
        self.channels.append(channel)
        return channel


@pytest.fixture
def served() -> Iterator[tuple[Served, str]]:
    state = Served()
    with serve_asgi(endpoint_app(state.endpoint)) as host:
        yield state, host


@asynccontextmanager
async def websocket(host: str) -> AsyncIterator[AsyncWebSocketSession]:
    url = f"http://{host}/acp/scripted"
    async with httpx.AsyncClient() as client:
        connecting = aconnect_ws(url, client, session_class=AsyncWebSocketSession)
        async with connecting as ws:
            yield ws


def lines_of(stream: httpx.Response) -> AsyncGenerator[str]:
    return cast("AsyncGenerator[str]", stream.aiter_lines())  # it is one: it can be closed


async def _stalled(served: Served) -> int:
    """How many chunks the flooding agent sent once it stopped getting further."""
    seen = 0
    with anyio.fail_after(30):
        while served.sent in (0, seen):  # noqa: ASYNC110 - another thread's counter
            await anyio.sleep(0.1)
        while served.sent != seen:
            seen = served.sent
            await anyio.sleep(0.5)
    return seen


async def test_a_frame_that_is_not_json_is_answered_with_a_parse_error(
    served: tuple[Served, str],
) -> None:
    state, host = served
    async with websocket(host) as ws:
        await ws.send_text("this is not JSON")
        assert await ws.receive_text() == PARSE_ERROR
        await ws.send_bytes(b'{"jsonrpc":"2.0","id":5,"method":"x"}')  # binary: ignored
        await ws.send_text('{"jsonrpc":"2.0","id":5,"method":"x"')
        assert await ws.receive_text() == PARSE_ERROR
        await ws.send_text("[1, 2]")
        assert await ws.receive_text() == PARSE_ERROR
        await ws.send_text("{\n  " + INITIALIZE.decode()[1:])  # raw newlines: one line
        answer = json.loads(await ws.receive_text())
    assert answer["id"] == 0
    assert answer["result"]["agentInfo"]["name"] == "scripted"
    [agent] = state.agents
    assert [m["method"] for m in agent.received] == ["initialize"]


async def test_a_websocket_frame_over_the_cap_closes_with_1009_and_stops_the_agent(
    served: tuple[Served, str],
) -> None:
    state, host = served
    async with websocket(host) as ws:
        await ws.send_text(INITIALIZE.decode())
        await ws.receive_text()
        await ws.send_bytes(b" " * (DEFAULT_MAX_LINE_BYTES + 1))
        with pytest.raises(WebSocketDisconnect) as caught:
            await ws.receive_text()
    assert (caught.value.code, caught.value.reason) == (1009, "the message is too big")
    [channel] = state.channels
    await eventually(channel.closed.is_set)
    assert [m["method"] for m in state.agents[0].received] == ["initialize"]


async def test_an_http_message_over_the_cap_is_413_and_the_agent_goes_on(
    served: tuple[Served, str],
) -> None:
    state, host = served
    url = f"http://{host}/acp/scripted"
    json_type = {"Content-Type": "application/json"}
    async with httpx.AsyncClient() as client:
        opened = await client.post(url, content=INITIALIZE, headers=json_type)
        headers = {**json_type, "Acp-Connection-Id": opened.headers["acp-connection-id"]}
        async with client.stream("GET", url, headers={**headers, "Accept": "text/event-stream"}):
            big = await client.post(
                url, content=b" " * (DEFAULT_MAX_LINE_BYTES + 1), headers=headers
            )
            assert big.status_code == 413
            assert big.json() == {
                "error": {"kind": "too_large", "message": "the message is over 67108864 bytes"}
            }
            assert (await client.post(url, content=NEW_SESSION, headers=headers)).status_code == 202
            await eventually(lambda: len(state.agents[0].received) == 2)
    assert [m["method"] for m in state.agents[0].received] == ["initialize", "session/new"]


@pytest.mark.parametrize(
    ("method", "headers", "body", "status", "error"),
    [
        ("POST", {}, INITIALIZE, 415, ("bad_request", "Content-Type must be application/json")),
        ("POST", {"Content-Type": "application/json"}, b"{", 400, ("bad_request", "the message is not a JSON-RPC message (a JSON object, UTF-8)")),
        ("POST", {"Content-Type": "application/json"}, NEW_SESSION, 400, ("bad_request", "Acp-Connection-Id is missing")),
        ("POST", {"Content-Type": "application/json", "Acp-Connection-Id": "nope"}, NEW_SESSION, 404, ("not_found", "no connection 'nope'")),
        ("GET", {"Accept": "application/json"}, b"", 406, ("bad_request", "Accept must include text/event-stream")),
        ("GET", {"Accept": "text/event-stream"}, b"", 400, ("bad_request", "Acp-Connection-Id is missing")),
        ("DELETE", {"Acp-Connection-Id": "nope"}, b"", 404, ("not_found", "no connection 'nope'")),
        ("PUT", {}, b"", 405, ("bad_request", "PUT is not an ACP method here")),
    ],
)  # fmt: skip
async def test_a_bad_request_gets_its_status_and_a_json_error(
    served: tuple[Served, str],
    method: str,
    headers: dict[str, str],
    body: bytes,
    status: int,
    error: tuple[str, str],
) -> None:
    _, host = served
    async with httpx.AsyncClient() as client:
        response = await client.request(
            method, f"http://{host}/acp/scripted", headers=headers, content=body
        )
    assert response.status_code == status
    assert response.json() == {"error": {"kind": error[0], "message": error[1]}}


async def test_the_session_header_is_checked_and_a_stream_has_one_reader(
    served: tuple[Served, str],
) -> None:
    state, host = served
    url = f"http://{host}/acp/scripted"
    json_type = {"Content-Type": "application/json"}
    async with httpx.AsyncClient() as client:
        opened = await client.post(url, content=INITIALIZE, headers=json_type)
        assert opened.status_code == 200
        assert opened.json()["result"]["agentInfo"]["name"] == "scripted"
        connection = {"Acp-Connection-Id": opened.headers["acp-connection-id"]}
        headers = {**json_type, **connection}
        sse = {**connection, "Accept": "text/event-stream"}
        async with client.stream("GET", url, headers=sse) as stream:
            assert stream.status_code == 200
            second = await client.get(url, headers=sse)
            assert (second.status_code, second.json()["error"]["kind"]) == (409, "conflict")
            no_header = await client.post(url, content=prompt(), headers=headers)
            assert no_header.json() == {
                "error": {"kind": "bad_request", "message": "session/prompt needs Acp-Session-Id"}
            }
            unknown = await client.post(
                url, content=prompt(), headers={**headers, "Acp-Session-Id": "s9"}
            )
            assert unknown.status_code == 404
            deleted = await client.delete(url, headers=connection)
            assert deleted.status_code == 202
            assert [line async for line in stream.aiter_lines()] == []
        assert (await client.post(url, content=NEW_SESSION, headers=headers)).status_code == 404
    [channel] = state.channels
    await eventually(lambda: channel.closed.is_set() and not state.endpoint.connections)


async def test_a_websocket_client_that_never_reads_holds_the_agent_back(
    served: tuple[Served, str],
) -> None:
    state, host = served
    async with websocket(host) as ws:
        for message in (INITIALIZE, NEW_SESSION):
            await ws.send_text(message.decode())
            await ws.receive_text()
        await ws.send_text(prompt().decode())
        sent = await _stalled(state)
    assert 0 < sent < FLOOD
    assert sent * len(CHUNK) < 16 * 1024 * 1024  # socket buffers, a few queues
    await eventually(state.channels[0].closed.is_set)


async def test_an_sse_client_that_never_reads_holds_the_agent_back(
    served: tuple[Served, str],
) -> None:
    state, host = served
    url = f"http://{host}/acp/scripted"
    json_type = {"Content-Type": "application/json"}
    async with httpx.AsyncClient(timeout=30) as client:
        opened = await client.post(url, content=INITIALIZE, headers=json_type)
        connection = {"Acp-Connection-Id": opened.headers["acp-connection-id"]}
        sse = {**connection, "Accept": "text/event-stream"}
        async with (
            client.stream("GET", url, headers=sse) as stream,
            aclosing(lines_of(stream)) as lines,  # closing it would close the stream
        ):
            await client.post(url, content=NEW_SESSION, headers={**json_type, **connection})
            first = await anext(lines)
            opened = json.loads(first.removeprefix("data: "))
            assert (opened["id"], opened["result"]["sessionId"]) == (1, "s0")
            session = {**connection, "Acp-Session-Id": "s0"}
            async with client.stream(
                "GET", url, headers={**session, "Accept": "text/event-stream"}
            ):
                await client.post(url, content=prompt(), headers={**json_type, **session})
                sent = await _stalled(state)  # the session's stream is never read
    assert 0 < sent < FLOOD
    assert sent * len(CHUNK) < 16 * 1024 * 1024
    await eventually(state.channels[0].closed.is_set)


async def _hang(agent: ScriptedAgent, session_id: str, params: Any) -> str:
    await agent.say(session_id, "working")
    await anyio.sleep_forever()
    raise AssertionError


@pytest.mark.parametrize("transport", ["ws", "http"])
async def test_a_client_that_vanishes_mid_turn_stops_the_agent(transport: str) -> None:
    state = Served(on_prompt=_hang)
    with serve_asgi(endpoint_app(state.endpoint)) as host:
        if transport == "ws":
            async with websocket(host) as ws:
                for message in (INITIALIZE, NEW_SESSION, prompt()):
                    await ws.send_text(message.decode())
                assert json.loads(await ws.receive_text())["id"] == 0
                assert json.loads(await ws.receive_text())["id"] == 1
                assert "working" in await ws.receive_text()
                await ws.stream.aclose()  # gone, without a close frame
        else:
            await _vanish_over_http(f"http://{host}/acp/scripted")
        await eventually(state.channels[0].closed.is_set)
        await eventually(lambda: not state.endpoint.connections)


async def _vanish_over_http(url: str) -> None:
    json_type = {"Content-Type": "application/json"}
    async with httpx.AsyncClient() as client:
        opened = await client.post(url, content=INITIALIZE, headers=json_type)
        connection = {"Acp-Connection-Id": opened.headers["acp-connection-id"]}
        sse = {**connection, "Accept": "text/event-stream"}
        async with (
            client.stream("GET", url, headers=sse) as stream,
            aclosing(lines_of(stream)) as lines,
        ):
            await client.post(url, content=NEW_SESSION, headers={**json_type, **connection})
            await anext(lines)
            session = {**connection, "Acp-Session-Id": "s0"}
            await client.post(url, content=prompt(), headers={**json_type, **session})
    # leaving closes the connection's stream: the client is gone


async def test_the_endpoint_runs_at_most_max_connections_agents() -> None:
    state = Served()
    state.endpoint = AcpEndpoint(state._launch, roots=("/",), max_connections=1)
    with serve_asgi(endpoint_app(state.endpoint)) as host:
        url = f"http://{host}/acp/scripted"
        json_type = {"Content-Type": "application/json"}
        async with websocket(host) as ws, httpx.AsyncClient() as client:
            await ws.send_text(INITIALIZE.decode())
            await ws.receive_text()
            full = await client.post(url, content=INITIALIZE, headers=json_type)
            assert (full.status_code, full.json()) == (
                503,
                {
                    "error": {
                        "kind": "limit",
                        "message": "the ACP endpoint runs 1 agents already; close one first",
                    }
                },
            )
            with pytest.raises(WebSocketUpgradeError) as refused:
                async with websocket(host):
                    pass
            assert refused.value.response.status_code == 503
        await eventually(lambda: state.channels[0].closed.is_set())
        async with httpx.AsyncClient() as client:  # the slot is free again
            opened = await client.post(url, content=INITIALIZE, headers=json_type)
            assert opened.status_code == 200
            await client.delete(
                url, headers={"Acp-Connection-Id": opened.headers["acp-connection-id"]}
            )
    assert len(state.channels) == 2


async def test_the_built_in_agents_by_default_and_an_unknown_one_is_404() -> None:
    with serve_asgi(endpoint_app(AcpEndpoint())) as host:
        async with httpx.AsyncClient() as client:
            response = await client.post(
                f"http://{host}/acp/nope",
                content=INITIALIZE,
                headers={"Content-Type": "application/json"},
            )
    assert response.status_code == 404
    assert response.json()["error"]["message"] == (
        "unknown agent 'nope'; known: claude, codex, qwen, opencode, gemini, antigravity"
    )


async def test_end_all_ends_every_stream_and_stops_every_agent() -> None:
    state = Served()
    endpoint = state.endpoint
    mounted = endpoint_app(endpoint)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/end-all":
            endpoint.end_all()  # as a server shutting down does, in its loop
            await send({"type": "http.response.start", "status": 204, "headers": []})
            await send({"type": "http.response.body", "body": b""})
        else:
            await mounted(scope, receive, send)

    with serve_asgi(app) as host:
        url = f"http://{host}/acp/scripted"
        async with httpx.AsyncClient() as client:
            json_type = {"Content-Type": "application/json"}
            opened = await client.post(url, content=INITIALIZE, headers=json_type)
            connection_id = opened.headers["acp-connection-id"]
            sse = {"Acp-Connection-Id": connection_id, "Accept": "text/event-stream"}
            async with client.stream("GET", url, headers=sse) as stream:
                assert (await client.get(f"http://{host}/end-all")).status_code == 204
                with anyio.fail_after(10):
                    assert [line async for line in stream.aiter_lines()] == []
        await eventually(lambda: state.channels[0].closed.is_set() and not endpoint.connections)


# Idle connections ------------------------------------------------------------------------


class Clock:
    """The endpoint's clock, moved by the test (read from the server's thread)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def _until_cancelled(agent: ScriptedAgent, session_id: str, params: Any) -> str:
    await agent.say(session_id, "working")
    await agent.cancelled.wait()
    return "cancelled"


IDLE = "idle for 60 s (no message either way, no turn running)"


@contextmanager
def reaping(clock: Clock) -> Iterator[tuple[Served, str]]:
    """The endpoint (idle timeout 60 s on ``clock``) served, with ``GET /reap`` calling
    `AcpEndpoint.reap_idle` in the server's loop (the wait it returns is the body)."""
    state = Served(on_prompt=_until_cancelled)
    state.endpoint = AcpEndpoint(state._launch, roots=("/",), idle_timeout=60, clock=clock)
    endpoint, mounted = state.endpoint, endpoint_app(state.endpoint)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/reap":
            wait = str(endpoint.reap_idle()).encode()
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": wait})
        else:
            await mounted(scope, receive, send)

    with serve_asgi(app) as host:
        yield state, host


async def reap(host: str) -> float:
    async with httpx.AsyncClient() as client:
        return float((await client.get(f"http://{host}/reap")).text)


async def test_an_idle_websocket_closes_with_1001_while_a_running_turn_keeps_one_open() -> None:
    clock = Clock()
    with reaping(clock) as (state, host):
        async with websocket(host) as idle, websocket(host) as busy:
            await idle.send_text(INITIALIZE.decode())  # and nothing more
            await idle.receive_text()
            for message in (INITIALIZE, NEW_SESSION, prompt()):
                await busy.send_text(message.decode())
            for _ in range(3):  # the answers to initialize, session/new; "working"
                await busy.receive_text()
            clock.now = 59.5
            assert await reap(host) == 0.5
            clock.now = 60.0
            assert await reap(host) == 60.0  # the turn runs: nothing else may end sooner
            with pytest.raises(WebSocketDisconnect) as caught:
                await idle.receive_text()
            assert (caught.value.code, caught.value.reason) == (1001, IDLE)
            await eventually(state.channels[0].closed.is_set)

            cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s0"}}
            await busy.send_text(json.dumps(cancel))
            answer = json.loads(await busy.receive_text())
            assert (answer["id"], answer["result"]) == (2, {"stopReason": "cancelled"})
            clock.now = 119.5  # idle since the turn ended, at 60
            assert await reap(host) == 0.5
            assert not state.channels[1].closed.is_set()
            clock.now = 120.0
            await reap(host)
            with pytest.raises(WebSocketDisconnect) as caught:
                await busy.receive_text()
            assert (caught.value.code, caught.value.reason) == (1001, IDLE)
        await eventually(state.channels[1].closed.is_set)


async def test_an_idle_http_connection_ends_while_a_running_turn_keeps_one() -> None:
    clock = Clock()
    with reaping(clock) as (state, host):
        url = f"http://{host}/acp/scripted"
        json_type = {"Content-Type": "application/json"}
        async with httpx.AsyncClient() as client:
            ids = []
            for _ in range(2):
                opened = await client.post(url, content=INITIALIZE, headers=json_type)
                ids.append(opened.headers["acp-connection-id"])
            assert ids[0] != ids[1]
            assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)  # 128 random bits
            idle, busy = ({"Acp-Connection-Id": i} for i in ids)
            sse = {"Accept": "text/event-stream"}
            async with (
                client.stream("GET", url, headers={**idle, **sse}) as idle_stream,
                client.stream("GET", url, headers={**busy, **sse}),
            ):
                await client.post(url, content=NEW_SESSION, headers={**json_type, **busy})
                connection = state.endpoint.connections[ids[1]]
                await eventually(lambda: "s0" in connection.sessions)
                session = {**json_type, **busy, "Acp-Session-Id": "s0"}
                await client.post(url, content=prompt(), headers=session)
                await eventually(lambda: connection.activity.turn_running)
                clock.now = 60.0
                assert await reap(host) == 60.0
                assert [line async for line in idle_stream.aiter_lines()] == []
                await eventually(lambda: ids[0] not in state.endpoint.connections)
                assert state.channels[0].closed.is_set()
                gone = await client.post(url, content=NEW_SESSION, headers={**json_type, **idle})
                assert (gone.status_code, gone.json()["error"]["message"]) == (
                    404,
                    f"no connection {ids[0]!r}",
                )

                cancel = b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s0"}}'
                await client.post(url, content=cancel, headers=session)
                await eventually(lambda: not connection.activity.turn_running)
                clock.now = 119.0
                assert await reap(host) == 1.0
                clock.now = 120.0
                await reap(host)
                await eventually(lambda: not state.endpoint.connections)
        assert state.channels[1].closed.is_set()
