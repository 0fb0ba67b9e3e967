"""The ACP endpoint as `gemwire serve` mounts it at ``/acp/{agent}``, through the whole app:
behind the token and the Origin check, on the server's agents (``--agent`` ones too), with
the stdio line cap for its bodies, and ended at shutdown with its agents."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from anyio.abc import TaskGroup
from httpx_ws import WebSocketDisconnect
from server_kit import BASE, LoadingAgent, ScriptedLauncher, Served, make_config, served

from gemwire.runners.acp import AcpOptions, AgentChannel, memory_channel_pair
from gemwire.server import create_app
from gemwire.server.state import AppState

pytestmark = pytest.mark.anyio

JSON = {"Content-Type": "application/json"}
INITIALIZE = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}'
NEW_SESSION = (
    b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}'
)


class EndingLauncher(ScriptedLauncher):
    """A `ScriptedLauncher` whose agents say when they ended (their channel closed)."""

    def __init__(self, tg: TaskGroup) -> None:
        super().__init__(tg)
        self.ended: list[anyio.Event] = []

    def channel(self, options: AcpOptions) -> AgentChannel:
        client_end, agent_end = memory_channel_pair()
        agent = LoadingAgent(agent_end, name="scripted")
        self.started.append(agent)
        ended = anyio.Event()
        self.ended.append(ended)

        async def run() -> None:
            try:
                await agent.run()
            finally:
                ended.set()

        self.tg.start_soon(run)
        return client_end


@asynccontextmanager
async def mounted(tmp_path: Path) -> AsyncIterator[tuple[Served, EndingLauncher]]:
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            launcher = EndingLauncher(tg)
            app = create_app(make_config(str(tmp_path), str(tmp_path / "s")), launcher=launcher)
            async with served(app) as server:
                yield server, launcher
            tg.cancel_scope.cancel()


async def bare(server: Served, method: str, path: str, **kwargs: Any) -> httpx.Response:
    """A request with exactly the headers given (no token unless given)."""
    transport = httpx.ASGITransport(app=server.app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
        return await client.request(method, path, **kwargs)


@pytest.mark.parametrize(
    ("headers", "status", "kind"),
    [
        ({}, 401, "unauthorized"),
        ({"Authorization": "Bearer wrong"}, 401, "unauthorized"),
        ({"Authorization": "Bearer test-token-0123456789", "Origin": "http://evil.example"}, 403, "forbidden"),
    ],
)  # fmt: skip
async def test_acp_over_http_needs_the_token_and_a_known_origin(
    tmp_path: Path, headers: dict[str, str], status: int, kind: str
) -> None:
    async with mounted(tmp_path) as (server, launcher):
        response = await bare(
            server, "POST", "/acp/scripted", content=INITIALIZE, headers={**JSON, **headers}
        )
        assert (response.status_code, response.json()["error"]["kind"]) == (status, kind)
        assert launcher.started == []


@pytest.mark.parametrize(
    "headers",
    [{"Authorization": ""}, {"Authorization": "Bearer wrong"}, {"Origin": "http://evil.example"}],
)
async def test_an_acp_websocket_without_the_token_or_from_a_foreign_origin_is_1008(
    tmp_path: Path, headers: dict[str, str]
) -> None:
    async with mounted(tmp_path) as (server, launcher):
        with pytest.raises(WebSocketDisconnect) as caught:
            async with server.ws("/acp/scripted", headers=headers):
                pass
        assert caught.value.code == 1008
        assert launcher.started == []


async def test_an_unknown_agent_is_404(tmp_path: Path) -> None:
    async with mounted(tmp_path) as (server, launcher):
        response = await server.request("POST", "/acp/nope", content=INITIALIZE, headers=JSON)
        assert response.status_code == 404
        assert response.json() == {
            "error": {"kind": "not_found", "message": "unknown agent 'nope'; known: scripted"}
        }
        assert launcher.started == []


async def test_the_websocket_reaches_the_servers_agent(tmp_path: Path) -> None:
    async with mounted(tmp_path) as (server, launcher), server.ws("/acp/scripted") as ws:
        await ws.send_text(INITIALIZE.decode())
        answer = json.loads(await ws.receive_text())
        assert (answer["id"], answer["result"]["agentInfo"]["name"]) == (0, "scripted")
        await ws.send_text(NEW_SESSION.decode())
        assert json.loads(await ws.receive_text())["result"]["sessionId"].endswith("-0")
        [agent] = launcher.started
        assert [m["method"] for m in agent.received] == ["initialize", "session/new"]


async def test_a_2_mib_acp_post_passes_while_the_api_keeps_its_1_mib_limit(
    tmp_path: Path,
) -> None:
    big = "x" * (2 * 1024 * 1024)
    message = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": 1, "clientInfo": {"name": big, "version": "1"}},
    }
    async with mounted(tmp_path) as (server, launcher):
        response = await server.request(
            "POST", "/acp/scripted", content=json.dumps(message).encode(), headers=JSON
        )
        assert response.status_code == 200
        assert response.json()["result"]["agentInfo"]["name"] == "scripted"
        [agent] = launcher.started
        assert agent.received[0]["params"]["clientInfo"]["name"] == big
        connection = response.headers["acp-connection-id"]
        gone = await server.request(
            "DELETE", "/acp/scripted", headers={"Acp-Connection-Id": connection}
        )
        assert gone.status_code == 202
        await launcher.ended[0].wait()

        api = await server.request("POST", "/v1/sessions", content=big.encode(), headers=JSON)
        assert api.status_code == 413
        assert api.json() == {
            "error": {"kind": "too_large", "message": "the request body is over 1048576 bytes"}
        }


AGENT = r"""
import json, os, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        token = os.environ.get("GEMWIRE_TOKEN", "none")
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {
            "protocolVersion": 1, "agentCapabilities": {},
            "agentInfo": {"name": "mini", "version": token}}}), flush=True)
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_an_agent_option_agent_is_reachable_without_the_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMWIRE_TOKEN", "test-token-0123456789")
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    config = make_config(
        str(tmp_path), str(tmp_path / "s"), agents={"mini": (sys.executable, str(script))}
    )
    with anyio.fail_after(30):
        async with served(create_app(config)) as server, server.ws("/acp/mini") as ws:
            await ws.send_text(INITIALIZE.decode())
            answer = json.loads(await ws.receive_text())
    assert answer["result"]["agentInfo"] == {"name": "mini", "version": "none"}


async def test_shutdown_ends_every_acp_connection_and_its_agent(tmp_path: Path) -> None:
    async with mounted(tmp_path) as (server, launcher):
        opened = await server.request("POST", "/acp/scripted", content=INITIALIZE, headers=JSON)
        headers = {
            "Acp-Connection-Id": opened.headers["acp-connection-id"],
            "Accept": "text/event-stream",
        }
        async with server.sse("/acp/scripted", headers) as stream, server.ws("/acp/scripted") as ws:
            await ws.send_text(INITIALIZE.decode())
            await ws.receive_text()
            state = server.app.state.gemwire
            assert isinstance(state, AppState)
            assert state.acp is not None
            await state.acp.drain()  # as `gemwire serve` does on SIGTERM
            for ended in launcher.ended:  # the agent's task notices its channel closed
                await ended.wait()
            with pytest.raises(WebSocketDisconnect) as caught:
                await ws.receive_text()
            assert (caught.value.code, caught.value.reason) == (1001, "the server is shutting down")
            await stream.ended.wait()
            assert stream.status == 200
        assert len(launcher.ended) == 2
        late = await server.request("POST", "/acp/scripted", content=INITIALIZE, headers=JSON)
        assert (late.status_code, late.json()) == (
            503,
            {"error": {"kind": "limit", "message": "the server is shutting down"}},
        )
        assert len(launcher.started) == 2
