"""The real `gemini --acp` 0.61.0 (scripted model, isolated home) behind gemwire's ACP
endpoint, on 127.0.0.1 as `gemwire serve` serves it (hypercorn): driven by the ACP Python SDK's own WebSocket and
Streamable HTTP clients (an implementation we did not write) and by ``gemwire acp
--connect``; hostile clients leave nothing running (``ps``)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from acp import connect_to_agent, text_block
from acp.http import create_http_stream
from acp.interfaces import Client
from acp.ws import create_websocket_stream
from click.testing import CliRunner
from httpx_ws import AsyncWebSocketSession, WebSocketDisconnect, aconnect_ws
from kit.served import endpoint_app, serve_asgi

from gemwire.cli import main
from gemwire.errors import AgentNotFound
from gemwire.runners.acp import AgentChannel, AgentLaunch, ProcessChannel
from gemwire.server.acp_endpoint import AcpEndpoint
from gemwire.testing import (
    Hang,
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    pinned_gemini_command,
)

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

HELLO = Scenario(turns=[Reply([Text("Hello "), Text("there.")])])
HANG = Scenario(turns=[Reply([Text("Thinking"), Hang()])])
HUNDRED_MB = 100 * 1000 * 1000


class Served:
    """gemini behind the endpoint at ``url`` (``…/acp/gemini``), in ``env``."""

    def __init__(self, host: str, env: IsolatedGemini) -> None:
        self.host = host
        self.env = env

    def url(self, scheme: str) -> str:
        return f"{scheme}://{self.host}/acp/gemini"


@asynccontextmanager
async def gemini_served(scenario: Scenario, tmp_path: Path) -> AsyncIterator[Served]:
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path)

        def launch(name: str) -> AgentChannel:
            if name != "gemini":
                raise AgentNotFound(f"unknown agent {name!r}")
            command = (*pinned_gemini_command(), "--acp")
            launch = AgentLaunch(
                command=command, cwd=str(env.workspace), env=env.environ(), inherit_env=False
            )
            return ProcessChannel(launch)

        with serve_asgi(endpoint_app(AcpEndpoint(launch, roots=(str(env.workspace),)))) as host:
            yield Served(host, env)
            await _nothing_left(env)
        assert env.live_processes() == []


async def _nothing_left(env: IsolatedGemini) -> None:
    with anyio.fail_after(20):
        while env.live_processes(settle=0):  # noqa: ASYNC110 - processes, not events
            await anyio.sleep(0.1)


class Collecting(Client):
    """An SDK client keeping the text of every agent message chunk."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if getattr(update, "session_update", None) == "agent_message_chunk":
            self.texts.append(update.content.text)

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no permission is asked in these scenarios")


async def _sdk_turn(transport: Any, env: IsolatedGemini) -> tuple[Any, Any, Any, list[str]]:
    client = Collecting()  # type: ignore[abstract]  # the SDK Protocol; unused methods
    connection = connect_to_agent(client, transport)
    try:
        with anyio.fail_after(90):
            init = await connection.initialize(protocol_version=1)
            session = await connection.new_session(cwd=str(env.workspace), mcp_servers=[])
            result = await connection.prompt(
                session_id=session.session_id, prompt=[text_block("say hello")]
            )
    finally:
        await connection.close()
        await transport.close()
    return init, session, result, client.texts


async def test_the_sdk_websocket_client_drives_gemini_through_the_endpoint(tmp_path: Path) -> None:
    async with gemini_served(HELLO, tmp_path) as served:
        transport = await create_websocket_stream(served.url("ws"))
        init, session, result, texts = await _sdk_turn(transport, served.env)
    assert init.protocol_version == 1
    assert init.agent_info.name == "gemini-cli"
    assert session.session_id
    assert result.stop_reason == "end_turn"
    assert "".join(texts) == "Hello there."


async def test_the_sdk_http_client_drives_gemini_through_the_endpoint(tmp_path: Path) -> None:
    async with gemini_served(HELLO, tmp_path) as served:
        # The SDK's default client wants HTTP/2 (h2); the endpoint speaks HTTP/1.1 as well.
        http = httpx.AsyncClient(timeout=httpx.Timeout(None))
        transport = create_http_stream(served.url("http"), client=http)
        try:
            init, session, result, texts = await _sdk_turn(transport, served.env)
        finally:
            await http.aclose()
    assert init.protocol_version == 1
    assert init.agent_info.name == "gemini-cli"
    assert session.session_id
    assert result.stop_reason == "end_turn"
    assert "".join(texts) == "Hello there."


def _order(event: dict[str, Any]) -> bool:
    return bool(event["type"] != "session_updated")  # a stable sort: the rest keep their order


def _comparable(output: str) -> list[dict[str, Any]]:
    """The JSON events, without what differs from run to run."""
    events = [json.loads(line) for line in output.splitlines()]
    for event in events:
        for varying in ("session_id", "duration_ms", "usage"):
            event.pop(varying, None)
    return events


@pytest.mark.parametrize("scheme", ["ws", "http"])
def test_gemwire_acp_connect_prints_what_a_local_run_prints(tmp_path: Path, scheme: str) -> None:
    with ScriptedModel(Scenario(turns=[HELLO.turns[0], HELLO.turns[0]])) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        cwd = ["--cwd", str(env.workspace)]
        local = CliRunner().invoke(
            main,
            ["acp", "--json", *cwd, "say hello", "--", *pinned_gemini_command(), "--acp"],
            env=env.environ(),
        )

        def launch(name: str) -> AgentChannel:
            command = (*pinned_gemini_command(), "--acp")
            return ProcessChannel(
                AgentLaunch(
                    command=command, cwd=str(env.workspace), env=env.environ(), inherit_env=False
                )
            )

        with serve_asgi(endpoint_app(AcpEndpoint(launch, roots=(str(env.workspace),)))) as host:
            url = f"{scheme}://{host}/acp/gemini"
            remote = CliRunner().invoke(
                main, ["acp", "--json", *cwd, "--connect", url, "say hello"]
            )
        assert env.live_processes() == []
    assert (local.exit_code, remote.exit_code) == (0, 0), remote.output
    # gemini sends its commands when it likes: before or after the prompt's first event
    assert sorted(_comparable(remote.stdout), key=_order) == sorted(
        _comparable(local.stdout), key=_order
    ), (remote.stdout, local.stdout)
    events = _comparable(remote.stdout)
    assert "".join(e["text"] for e in events if e["type"] == "message_delta") == "Hello there."
    assert (events[-1]["type"], events[-1]["answer"]) == ("turn_completed", "Hello there.")


INITIALIZE = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}'


def new_session(env: IsolatedGemini) -> bytes:
    params = {"cwd": str(env.workspace), "mcpServers": []}
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": params}
    ).encode()


@asynccontextmanager
async def websocket(url: str) -> AsyncIterator[AsyncWebSocketSession]:
    async with (
        httpx.AsyncClient() as client,
        aconnect_ws(url, client, session_class=AsyncWebSocketSession) as ws,
    ):
        yield ws


async def test_a_100_mb_websocket_frame_is_refused_and_gemini_stops_cleanly(tmp_path: Path) -> None:
    async with gemini_served(HELLO, tmp_path) as served:
        async with websocket(served.url("ws")) as ws:
            await ws.send_text(INITIALIZE.decode())
            assert (
                json.loads(await ws.receive_text())["result"]["agentInfo"]["name"] == "gemini-cli"
            )
            await ws.send_bytes(b" " * HUNDRED_MB)
            with pytest.raises(WebSocketDisconnect) as caught:
                await _drain(ws)
        assert (caught.value.code, caught.value.reason) == (1009, "the message is too big")


async def _drain(ws: AsyncWebSocketSession) -> None:
    """Read (what gemini says meanwhile) until the socket closes."""
    while True:
        await ws.receive_text()


async def test_a_100_mb_post_is_413_and_gemini_goes_on(tmp_path: Path) -> None:
    async with gemini_served(HELLO, tmp_path) as served:
        url = served.url("http")
        json_type = {"Content-Type": "application/json"}
        async with httpx.AsyncClient(timeout=60) as client:
            opened = await client.post(url, content=INITIALIZE, headers=json_type)
            assert opened.json()["result"]["agentInfo"]["name"] == "gemini-cli"
            connection = {"Acp-Connection-Id": opened.headers["acp-connection-id"]}
            sse = {**connection, "Accept": "text/event-stream"}
            async with client.stream("GET", url, headers=sse) as stream:
                big = await client.post(
                    url, content=b" " * HUNDRED_MB, headers={**json_type, **connection}
                )
                assert (big.status_code, big.json()["error"]["kind"]) == (413, "too_large")
                posted = await client.post(
                    url, content=new_session(served.env), headers={**json_type, **connection}
                )
                assert posted.status_code == 202
                with anyio.fail_after(60):
                    async for line in stream.aiter_lines():
                        if line.startswith("data: ") and '"id":1' in line.replace(" ", ""):
                            answer = json.loads(line[6:])
                            break
                assert answer["result"]["sessionId"]
            deleted = await client.delete(url, headers=connection)
            assert deleted.status_code in (202, 404)  # 404: the stream's end already stopped it


@pytest.mark.parametrize("scheme", ["ws", "http"])
async def test_a_client_that_vanishes_mid_turn_leaves_no_gemini_running(
    tmp_path: Path, scheme: str
) -> None:
    async with gemini_served(HANG, tmp_path) as served:
        assert served.env.live_processes(settle=0) == []
        prompt = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/prompt",
            "params": {"sessionId": "", "prompt": [{"type": "text", "text": "think"}]},
        }
        if scheme == "ws":
            async with websocket(served.url("ws")) as ws:
                await ws.send_text(INITIALIZE.decode())
                await ws.receive_text()
                await ws.send_text(new_session(served.env).decode())
                session_id = await _session_id(ws.receive_text)
                prompt["params"]["sessionId"] = session_id  # type: ignore[index]
                await ws.send_text(json.dumps(prompt))
                await _until_thinking(ws.receive_text)
                assert served.env.live_processes(settle=0) != []
                await ws.stream.aclose()  # gone, without a close frame
        else:
            await _vanish_over_http(served, prompt)


async def _session_id(receive: Any) -> str:
    with anyio.fail_after(60):
        while True:
            message = json.loads(await receive())
            if message.get("id") == 1:
                return str(message["result"]["sessionId"])


async def _until_thinking(receive: Any) -> None:
    with anyio.fail_after(60):
        while "Thinking" not in await receive():
            pass


async def _vanish_over_http(served: Served, prompt: dict[str, Any]) -> None:
    url = served.url("http")
    json_type = {"Content-Type": "application/json"}
    async with httpx.AsyncClient(timeout=60) as client:
        opened = await client.post(url, content=INITIALIZE, headers=json_type)
        connection = {"Acp-Connection-Id": opened.headers["acp-connection-id"]}
        sse = {**connection, "Accept": "text/event-stream"}
        async with client.stream("GET", url, headers=sse) as stream:
            lines = stream.aiter_lines()
            await client.post(
                url, content=new_session(served.env), headers={**json_type, **connection}
            )
            session_id = await _session_id(_data(lines))
            prompt["params"]["sessionId"] = session_id
            session = {**connection, "Acp-Session-Id": session_id}
            async with client.stream(
                "GET", url, headers={**session, "Accept": "text/event-stream"}
            ) as turn:
                await client.post(
                    url, content=json.dumps(prompt).encode(), headers={**json_type, **session}
                )
                await _until_thinking(_data(turn.aiter_lines()))
                assert served.env.live_processes(settle=0) != []
    # leaving drops both streams without a DELETE: the client is gone


def _data(lines: Any) -> Any:
    async def receive() -> str:
        async for line in lines:
            if line.startswith("data: "):
                return str(line[6:])
        raise AssertionError("the stream ended")

    return receive
