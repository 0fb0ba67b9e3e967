"""The transport RFD (docs/rfds/streamable-http-websocket-transport.mdx, Active), probed
against gemwire's endpoint at ``/acp`` with raw HTTP: status codes, headers and flows,
each as the RFD's routing table and its Streamable HTTP flows say (and where the RFD
leaves room, as docs/server.md says). The agent is the scripted one, in process."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import msgspec
import pytest
from httpx_ws import AsyncWebSocketSession, aconnect_ws
from kit.acp_interop import ScriptedLoadingAgent
from kit.served import ScriptedChannel, serve_asgi
from starlette.routing import Route, Router, WebSocketRoute

from gemwire.server.acp_endpoint import AcpEndpoint
from gemwire.testing import ScriptedAgent
from gemwire.testing.agent_scenario import ASKING_MODES

pytestmark = pytest.mark.anyio

JSON = {"Content-Type": "application/json"}
SSE = {"Accept": "text/event-stream"}
CONNECTION = "Acp-Connection-Id"
SESSION = "Acp-Session-Id"

OPENED = {"sessionId": "s0", "modes": msgspec.to_builtins(ASKING_MODES)}
"""The scripted agent's answer to session/new: its session, and its modes."""


def rpc(request_id: int | None, method: str, **params: Any) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if request_id is not None:
        message["id"] = request_id
    return json.dumps(message).encode()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, list[ScriptedAgent]]]:
    agents: list[ScriptedAgent] = []
    endpoint = AcpEndpoint(
        lambda name: ScriptedChannel(agents, agent_type=ScriptedLoadingAgent),
        roots=(str(tmp_path),),
    )
    app = Router(
        routes=[Route("/acp", endpoint), WebSocketRoute("/acp", endpoint)],
        lifespan=lambda app: endpoint.running(),
    )
    with serve_asgi(app) as host:
        yield f"http://{host}/acp", str(tmp_path), agents


class Stream:
    """One SSE stream's messages, read as they come."""

    def __init__(self, lines: AsyncIterator[str]) -> None:
        self._lines = lines

    async def next(self) -> Any:
        with anyio.fail_after(10):
            async for line in self._lines:
                if line.startswith("data:"):
                    return json.loads(line[5:])
        raise AssertionError("the stream ended")


@asynccontextmanager
async def stream(
    http: httpx.AsyncClient, url: str, headers: dict[str, str]
) -> AsyncIterator[Stream]:
    async with http.stream("GET", url, headers={**SSE, **headers}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        yield Stream(response.aiter_lines())


async def _initialize(http: httpx.AsyncClient, url: str) -> dict[str, str]:
    response = await http.post(url, content=rpc(0, "initialize", protocolVersion=1), headers=JSON)
    assert response.status_code == 200
    connection_id = response.headers[CONNECTION]
    assert response.json()["result"]["connectionId"] == connection_id
    return {CONNECTION: connection_id}


async def test_the_status_codes_of_the_routing_table(served: tuple[str, str, Any]) -> None:
    url, cwd, _ = served
    async with httpx.AsyncClient(timeout=10) as http:
        new = rpc(1, "session/new", cwd=cwd, mcpServers=[])
        assert (
            await http.post(url, content=new, headers={"Content-Type": "text/plain"})
        ).status_code == 415
        assert (await http.post(url, content=new, headers=JSON)).status_code == 400  # no connection
        unknown = {**JSON, CONNECTION: "nope"}
        assert (await http.post(url, content=new, headers=unknown)).status_code == 404
        assert (await http.get(url, headers={"Accept": "application/json"})).status_code == 406
        assert (await http.get(url, headers=SSE)).status_code == 400
        assert (await http.get(url, headers={**SSE, CONNECTION: "nope"})).status_code == 404
        assert (await http.delete(url)).status_code == 400
        connection = await _initialize(http, url)
        batch = b"[" + new + b"]"
        assert (
            await http.post(url, content=batch, headers={**JSON, **connection})
        ).status_code == 501
        prompt = rpc(2, "session/prompt", sessionId="s0", prompt=[])
        assert (
            await http.post(url, content=prompt, headers={**JSON, **connection})
        ).status_code == 400
        assert (await http.delete(url, headers=connection)).status_code == 202
        assert (
            await http.post(url, content=new, headers={**JSON, **connection})
        ).status_code == 404


async def test_every_post_but_initialize_is_202_with_its_answer_on_the_stream(
    served: tuple[str, str, Any],
) -> None:
    url, cwd, _ = served
    async with httpx.AsyncClient(timeout=10) as http:
        connection = await _initialize(http, url)
        headers = {**JSON, **connection}
        async with stream(http, url, connection) as events:
            cases: list[tuple[bytes, dict[str, Any]]] = [
                (rpc(1, "session/new", cwd=cwd, mcpServers=[]), {"result": OPENED}),
                (
                    rpc(2, "session/new", cwd="/", mcpServers=[]),
                    {
                        "error": {
                            "code": -32602,
                            "message": f"Invalid params: cwd '/' is outside the server's roots ({cwd}): a session's folders must lie under one of them, symlinks resolved",
                        }
                    },
                ),
                (
                    b'{"jsonrpc":"2.0","id":3,"method":["session/new"]}',
                    {
                        "error": {
                            "code": -32600,
                            "message": "Invalid Request: method must be a string",
                        }
                    },
                ),
            ]
            for body, answer in cases:
                response = await http.post(url, content=body, headers=headers)
                assert (response.status_code, response.content) == (202, b"")
                assert await events.next() == {
                    "jsonrpc": "2.0",
                    "id": json.loads(body)["id"],
                    **answer,
                }


async def test_the_resume_flow_opens_the_session_stream_before_it_posts_the_load(
    served: tuple[str, str, list[ScriptedAgent]],
) -> None:
    url, cwd, agents = served
    async with httpx.AsyncClient(timeout=10) as http:
        connection = await _initialize(http, url)
        session = {**connection, SESSION: "old"}
        async with stream(http, url, connection), stream(http, url, session) as replay:
            load = rpc(1, "session/load", sessionId="old", cwd=cwd, mcpServers=[])
            response = await http.post(url, content=load, headers={**JSON, **session})
            assert (response.status_code, response.content) == (202, b"")
            updates = [(await replay.next())["params"]["update"] for _ in range(2)]
            assert [u["content"]["text"] for u in updates] == ["earlier", "before"]
            # The answer after the replay, on the stream that carried it (docs/server.md).
            assert await replay.next() == {"jsonrpc": "2.0", "id": 1, "result": {}}
            prompt = rpc(2, "session/prompt", sessionId="old", prompt=[])
            response = await http.post(url, content=prompt, headers={**JSON, **session})
            assert response.status_code == 202
            assert await replay.next() == {
                "jsonrpc": "2.0",
                "id": 2,
                "result": {"stopReason": "end_turn"},
            }
    assert [m["method"] for m in agents[0].received] == [
        "initialize",
        "session/load",
        "session/prompt",
    ]


async def test_a_refused_load_closes_the_session_stream_it_opened(
    served: tuple[str, str, Any],
) -> None:
    url, _, _ = served
    async with httpx.AsyncClient(timeout=10) as http:
        connection = await _initialize(http, url)
        session = {**connection, SESSION: "old"}
        async with stream(http, url, connection) as events:
            async with http.stream("GET", url, headers={**SSE, **session}) as replay:
                load = rpc(1, "session/load", sessionId="old", cwd="/", mcpServers=[])
                response = await http.post(url, content=load, headers={**JSON, **session})
                assert response.status_code == 202
                assert (await events.next())["error"]["code"] == -32602
                assert [line async for line in replay.aiter_lines()] == []
            prompt = rpc(2, "session/prompt", sessionId="old", prompt=[])
            response = await http.post(url, content=prompt, headers={**JSON, **session})
            assert response.status_code == 404


async def test_the_websocket_upgrade_names_the_connection_and_ignores_binary_frames(
    served: tuple[str, str, Any],
) -> None:
    url, _, agents = served
    async with (
        httpx.AsyncClient(timeout=10) as http,
        aconnect_ws(url, http, session_class=AsyncWebSocketSession) as ws,
    ):
        assert ws.response is not None
        assert len(ws.response.headers[CONNECTION]) == 32
        await ws.send_bytes(rpc(7, "initialize", protocolVersion=1))
        await ws.send_text(rpc(0, "initialize", protocolVersion=1).decode())
        assert json.loads(await ws.receive_text())["id"] == 0
    assert [m["id"] for m in agents[0].received] == [0]


async def test_the_agent_is_named_by_a_query_parameter(tmp_path: Path) -> None:
    names: list[str] = []

    def launch(name: str) -> ScriptedChannel:
        names.append(name)
        return ScriptedChannel()

    endpoint = AcpEndpoint(launch, roots=(str(tmp_path),))
    app = Router(
        routes=[Route("/acp", endpoint), Route("/acp/{agent}", endpoint)],
        lifespan=lambda app: endpoint.running(),
    )
    with serve_asgi(app) as host:
        async with httpx.AsyncClient(timeout=10) as http:
            for path in ("/acp?agent=claude", "/acp", "/acp/qwen"):
                body = rpc(0, "initialize", protocolVersion=1)
                response = await http.post(f"http://{host}{path}", content=body, headers=JSON)
                assert response.status_code == 200
                await http.delete(
                    f"http://{host}{path}", headers={CONNECTION: response.headers[CONNECTION]}
                )
    assert names == ["claude", "gemini", "qwen"]
