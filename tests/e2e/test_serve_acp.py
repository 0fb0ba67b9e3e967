"""``gemwire serve`` as a process, its ACP endpoint ``/acp/gemini`` driving the real ``gemini
--acp`` 0.61.0 (scripted model, isolated home): the ACP Python SDK's WebSocket and
Streamable HTTP clients (an implementation we did not write) and ``gemwire acp --connect``
each get a streamed answer with the token; a session's folder outside ``--root`` (named
by the SDK, or the folder ``gemwire acp --connect`` runs in) is refused and nothing is
written there; SIGTERM with an ACP WebSocket and an HTTP connection open closes both,
stops their agents and exits 0."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from acp import RequestError, connect_to_agent, text_block
from acp.http import create_http_stream
from acp.interfaces import Client
from acp.ws import create_websocket_stream
from httpx_ws import AsyncWebSocketSession, WebSocketDisconnect, aconnect_ws
from kit.serve_process import TOKEN, Server

from gemwire.testing import IsolatedGemini, Reply, Scenario, ScriptedModel, Text

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

AUTH = {"Authorization": f"Bearer {TOKEN}"}
HELLO = Reply([Text("Hello "), Text("there.")])
INITIALIZE = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}'


class Collecting(Client):
    """An SDK client keeping the text of every agent message chunk."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if getattr(update, "session_update", None) == "agent_message_chunk":
            self.texts.append(update.content.text)

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no permission is asked here")


async def sdk_turn(transport: Any, cwd: Path) -> tuple[str, str, list[str]]:
    """initialize, session/new, one prompt: the agent's name, the stop reason, the text."""
    client = Collecting()  # type: ignore[abstract]  # the SDK Protocol; unused methods
    connection = connect_to_agent(client, transport)
    try:
        with anyio.fail_after(90):
            init = await connection.initialize(protocol_version=1)
            session = await connection.new_session(cwd=str(cwd), mcp_servers=[])
            result = await connection.prompt(
                session_id=session.session_id, prompt=[text_block("say hello")]
            )
    finally:
        await connection.close()
        await transport.close()
    assert init.agent_info is not None
    return init.agent_info.name, result.stop_reason, client.texts


async def test_acp_clients_drive_gemini_through_gemwire_serve(tmp_path: Path) -> None:
    with ScriptedModel(Scenario(turns=[HELLO, HELLO, HELLO])) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        server = Server(env, tmp_path / "state")
        try:
            with anyio.fail_after(240):
                await sdk_clients(server.host, env)
                await gemwire_acp_connect(server.host, env)
                await outside_the_root(server.host, env, tmp_path / "outside")
                code, stderr, closed = await sigterm_with_connections_open(server, env)
        finally:
            await server.close()
        assert code == 0, stderr
        assert TOKEN not in stderr
        assert closed == (1001, "the server is shutting down")
        assert env.live_processes() == []


async def sdk_clients(host: str, env: IsolatedGemini) -> None:
    """The SDK's WebSocket and Streamable HTTP clients, the token in the Authorization header."""
    transport = await create_websocket_stream(f"ws://{host}/acp/gemini", headers=AUTH)
    assert await sdk_turn(transport, env.workspace) == (
        "gemini-cli", "end_turn", ["Hello ", "there."],
    )  # fmt: skip
    # The SDK's default client wants HTTP/2 (h2); the server speaks HTTP/1.1.
    async with httpx.AsyncClient(timeout=httpx.Timeout(None), headers=AUTH) as http:
        transport = create_http_stream(f"http://{host}/acp/gemini", client=http)
        assert await sdk_turn(transport, env.workspace) == (
            "gemini-cli", "end_turn", ["Hello ", "there."],
        )  # fmt: skip


async def gemwire_acp_connect(host: str, env: IsolatedGemini) -> None:
    cli = await anyio.run_process(
        [
            sys.executable, "-m", "gemwire", "acp", "--json", "--cwd", str(env.workspace),
            "--connect", f"ws://{host}/acp/gemini", "--token", TOKEN, "say hello",
        ],
        env=env.environ(),
        check=False,
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr.decode()
    events = [json.loads(line) for line in cli.stdout.decode().splitlines()]
    assert "".join(e["text"] for e in events if e["type"] == "message_delta") == "Hello there."
    last = events[-1]
    assert (last["type"], last["ok"], last["answer"]) == ("turn_completed", True, "Hello there.")


async def outside_the_root(host: str, env: IsolatedGemini, outside: Path) -> None:
    """A session in a folder outside the root, or through a symlink out of it: refused
    over both transports, and by ``gemwire acp --connect`` run there; nothing is written."""
    await anyio.Path(outside).mkdir()
    link = env.workspace / "out"
    await anyio.Path(link).symlink_to(outside)
    root = await anyio.Path(env.workspace).resolve()
    rule = f"is outside the server's roots ({root}): a session's folders must lie under one "
    rule += "of them, symlinks resolved"
    transports = [await create_websocket_stream(f"ws://{host}/acp/gemini", headers=AUTH)]
    async with httpx.AsyncClient(timeout=httpx.Timeout(None), headers=AUTH) as http:
        transports.append(create_http_stream(f"http://{host}/acp/gemini", client=http))
        for transport in transports:
            connection = connect_to_agent(Collecting(), transport)  # type: ignore[abstract]
            try:
                with anyio.fail_after(60):
                    await connection.initialize(protocol_version=1)
                    for cwd in (outside, link):
                        with pytest.raises(RequestError) as refused:
                            await connection.new_session(cwd=str(cwd), mcp_servers=[])
                        assert (refused.value.code, str(refused.value)) == (
                            -32602,
                            f"Invalid params: cwd '{cwd}' {rule}",
                        )
            finally:
                await connection.close()
                await transport.close()
    cli = await anyio.run_process(
        [
            sys.executable, "-m", "gemwire", "acp", "--json", "--connect",
            f"ws://{host}/acp/gemini", "--token", TOKEN, "write pwned.txt",
        ],
        cwd=outside,
        env=env.environ(),
        check=False,
    )  # fmt: skip
    [last] = [json.loads(line) for line in cli.stdout.decode().splitlines()]
    assert (cli.returncode, last["type"], last["error"]) == (
        1,
        "turn_completed",
        {
            "kind": "input",
            "message": f"session/new: Invalid params: cwd '{outside}' {rule}",
            "exit_code": None,
        },
    )
    assert [p async for p in anyio.Path(outside).iterdir()] == []
    await anyio.Path(link).unlink()


async def sigterm_with_connections_open(
    server: Server, env: IsolatedGemini
) -> tuple[int, str, tuple[int, str]]:
    """SIGTERM while a WebSocket and a Streamable HTTP connection each have their gemini:
    the exit status, the log, and the WebSocket's close code and reason."""
    url = f"http://{server.host}/acp/gemini"
    async with httpx.AsyncClient(timeout=60, headers=AUTH) as client:
        ws: AsyncWebSocketSession
        async with aconnect_ws(url, client) as ws:
            await ws.send_text(INITIALIZE.decode())
            assert json.loads(await ws.receive_text())["id"] == 0
            json_type = {"Content-Type": "application/json"}
            opened = await client.post(url, content=INITIALIZE, headers=json_type)
            assert opened.status_code == 200
            stream = {
                "Acp-Connection-Id": opened.headers["acp-connection-id"],
                "Accept": "text/event-stream",
            }
            async with client.stream("GET", url, headers=stream) as events:
                assert events.status_code == 200
                code, stderr = await server.stop()
                async for _ in events.aiter_lines():  # it ends
                    pass
            with pytest.raises(WebSocketDisconnect) as caught:  # noqa: PT012
                while True:
                    await ws.receive_text()
    return code, stderr, (caught.value.code, caught.value.reason)
