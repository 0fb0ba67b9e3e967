"""The ACP endpoint as `gemwire serve` mounts it at ``/acp/{agent}``, through the whole app:
behind the token and the Origin check, on the server's agents (``--agent`` ones too), with
the stdio line cap for its bodies, sessions only in folders under the roots, idle
connections ended, and ended at shutdown with its agents."""

from __future__ import annotations

import json
import os
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
from hypothesis import given, settings, strategies as st
from kit.server import BASE, LoadingAgent, ScriptedLauncher, Served, make_config, served

from gemwire.protocol.acp.remote import peek
from gemwire.runners.acp import AcpOptions, AgentChannel, memory_channel_pair
from gemwire.server import create_app
from gemwire.server.acp_roots import Refused, SessionFolders
from gemwire.server.state import AppState

pytestmark = pytest.mark.anyio

JSON = {"Content-Type": "application/json"}
INITIALIZE = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}'


def request(method: str, params: object, request_id: int | None = 1) -> bytes:
    message: dict[str, object] = {"jsonrpc": "2.0", "method": method, "params": params}
    if request_id is not None:
        message["id"] = request_id
    return json.dumps(message).encode()


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
async def mounted(tmp_path: Path, **changes: Any) -> AsyncIterator[tuple[Served, EndingLauncher]]:
    """The app, its one root ``tmp_path / "root"``, its state beside it."""
    (tmp_path / "root").mkdir(exist_ok=True)
    config = make_config(str(tmp_path / "root"), str(tmp_path / "s"), **changes)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            launcher = EndingLauncher(tg)
            app = create_app(config, launcher=launcher)
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
        await ws.send_text(request("session/new", {"cwd": str(tmp_path / "root")}).decode())
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


# The roots: the folders a client names for a session -------------------------------------


class Folders:
    """A root holding folders, a symlink out, symlinks in, a file and a FIFO; a folder
    outside it (and one of the same name in it)."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path.resolve() / "root"
        self.outside = tmp_path.resolve() / "outside"
        for folder in (self.root / "work" / "deeper", self.root / "outside", self.outside):
            folder.mkdir(parents=True, exist_ok=True)
        (self.root / "out").symlink_to(self.outside)
        (self.root / "in").symlink_to(self.root / "work")
        (self.root / "jump").symlink_to(self.root / "work" / "deeper")
        (self.root / "file").write_text("x")
        os.mkfifo(self.root / "fifo")

    def outside_rule(self, field: str, path: Path | str) -> str:
        return (
            f"Invalid params: {field} {str(path)!r} is outside the server's roots "
            f"({self.root}): a session's folders must lie under one of them, symlinks resolved"
        )


REFUSED = [
    ("session/new", lambda f: {"cwd": str(f.outside)}, lambda f: f.outside_rule("cwd", f.outside)),
    ("session/new", lambda f: {"cwd": str(f.root / "out")}, lambda f: f.outside_rule("cwd", f.root / "out")),
    ("session/new", lambda f: {"cwd": f"{f.root}/work/../.."}, lambda f: f.outside_rule("cwd", f"{f.root}/work/../..")),
    ("session/new", lambda f: {"cwd": str(f.root / "fifo")}, lambda f: f"Invalid params: cwd '{f.root}/fifo' is not a folder"),
    ("session/new", lambda f: {"cwd": str(f.root / "file")}, lambda f: f"Invalid params: cwd '{f.root}/file' is not a folder"),
    ("session/new", lambda f: {"cwd": str(f.root / "nope")}, lambda f: f"Invalid params: cwd '{f.root}/nope' does not exist"),
    ("session/new", lambda f: {"cwd": "work"}, lambda f: "Invalid params: cwd 'work' is not an absolute path"),
    ("session/new", lambda f: {"cwd": f"{f.root}/work\0"}, lambda f: f"Invalid params: cwd '{f.root}/work\\x00' holds a NUL byte"),
    ("session/new", lambda f: {"cwd": ["/"]}, lambda f: "Invalid params: cwd must be a string (an absolute path)"),
    ("session/new", lambda f: [str(f.root)], lambda f: "Invalid params: params must be an object"),
    ("session/new", lambda f: {"cwd": str(f.root), "additionalDirectories": [str(f.root / "work"), str(f.outside)]}, lambda f: f.outside_rule("additionalDirectories[1]", f.outside)),
    ("session/new", lambda f: {"cwd": str(f.root), "additionalDirectories": str(f.root)}, lambda f: "Invalid params: additionalDirectories must be a list of paths"),
    # An odd sessionId makes the message route nowhere in particular: still checked.
    ("session/new", lambda f: {"cwd": str(f.outside), "sessionId": 5}, lambda f: f.outside_rule("cwd", f.outside)),
    ("session/load", lambda f: {"sessionId": "s", "cwd": str(f.outside), "mcpServers": []}, lambda f: f.outside_rule("cwd", f.outside)),
    ("session/resume", lambda f: {"sessionId": "s", "cwd": str(f.root), "additionalDirectories": [str(f.root / "out")]}, lambda f: f.outside_rule("additionalDirectories[0]", f.root / "out")),
    ("session/fork", lambda f: {"sessionId": "s", "cwd": str(f.root / "out"), "mcpServers": []}, lambda f: f.outside_rule("cwd", f.root / "out")),
    ("session/list", lambda f: {"cwd": str(f.outside)}, lambda f: f.outside_rule("cwd", f.outside)),
]  # fmt: skip


async def exchange(server: Served, transport: str, message: bytes) -> dict[str, Any]:
    """``initialize``, then ``message``: the answer to it the client gets."""
    if transport == "ws":
        async with server.ws("/acp/scripted") as ws:
            await ws.send_text(INITIALIZE.decode())
            await ws.receive_text()
            await ws.send_text(message.decode())
            answer: dict[str, Any] = json.loads(await ws.receive_text())
            return answer
    opened = await server.request("POST", "/acp/scripted", content=INITIALIZE, headers=JSON)
    connection = {"Acp-Connection-Id": opened.headers["acp-connection-id"]}
    sse = {**connection, "Accept": "text/event-stream"}
    async with server.sse("/acp/scripted", sse) as stream:
        posted = await server.request(
            "POST", "/acp/scripted", content=message, headers={**JSON, **connection}
        )
        if posted.status_code == 200:  # answered in the body, as initialize is
            answer = posted.json()
        else:
            assert posted.status_code == 202
            while not stream.messages():  # noqa: ASYNC110 - the stream's own state
                await anyio.sleep(0.01)
            answer = json.loads(stream.messages()[0]["data"])
        await server.request("DELETE", "/acp/scripted", headers=connection)
    return answer


@pytest.mark.parametrize("transport", ["ws", "http"])
@pytest.mark.parametrize(("method", "params", "error"), REFUSED)
async def test_a_folder_outside_the_roots_is_invalid_params_and_never_reaches_the_agent(
    tmp_path: Path, transport: str, method: str, params: Any, error: Any
) -> None:
    folders = Folders(tmp_path)
    async with mounted(tmp_path) as (server, launcher):
        answer = await exchange(server, transport, request(method, params(folders), 7))
        [agent] = launcher.started
        assert [m["method"] for m in agent.received] == ["initialize"]
    assert answer == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32602, "message": error(folders)},
    }
    assert list(folders.outside.iterdir()) == []


@pytest.mark.parametrize("transport", ["ws", "http"])
async def test_folders_under_a_root_reach_the_agent_as_their_real_paths(
    tmp_path: Path, transport: str
) -> None:
    folders = Folders(tmp_path)
    work = str(folders.root / "work")
    # Keys written twice: the agent gets the value checked (the last, as JSON.parse reads
    # it). "jump/../../outside" is root/outside by real path, but the folder outside the
    # root to an agent that joins ".." by name: it gets the real path.
    cwds = f'"cwd":"{folders.outside}","cwd":"{folders.root / "in"}"'
    extra = f'"additionalDirectories":["{folders.root}/jump/../../outside"]'
    params = f'{{{cwds},{extra},"mcpServers":[],"_meta":{{"x":1.5}}}}'
    message = '{"jsonrpc":"2.0","id":"n","method":"session/new","params":' + params + "}"
    async with mounted(tmp_path) as (server, launcher):
        answer = await exchange(server, transport, message.encode())
        [agent] = launcher.started
    assert (answer["id"], answer["result"]["sessionId"][-2:]) == ("n", "-0")
    assert agent.received[1] == {
        "jsonrpc": "2.0",
        "id": "n",
        "method": "session/new",
        "params": {
            "cwd": work,
            "additionalDirectories": [str(folders.root / "outside")],
            "mcpServers": [],
            "_meta": {"x": 1.5},
        },
    }


async def test_a_refused_notification_gets_no_answer_and_the_connection_goes_on(
    tmp_path: Path,
) -> None:
    folders = Folders(tmp_path)
    async with mounted(tmp_path) as (server, launcher), server.ws("/acp/scripted") as ws:
        await ws.send_text(INITIALIZE.decode())
        await ws.receive_text()
        await ws.send_text(request("session/new", {"cwd": str(folders.outside)}, None).decode())
        await ws.send_text(request("session/new", {"cwd": str(folders.root)}, 2).decode())
        assert json.loads(await ws.receive_text())["id"] == 2
        [agent] = launcher.started
        assert [m.get("params") for m in agent.received[1:]] == [{"cwd": str(folders.root)}]


async def test_a_session_opened_with_no_folder_is_in_the_first_root(tmp_path: Path) -> None:
    root = Folders(tmp_path).root
    async with mounted(tmp_path) as (server, launcher):
        answer = await exchange(server, "ws", request("session/new", {"mcpServers": []}))
        [agent] = launcher.started
    assert "result" in answer
    assert agent.received[1]["params"] == {
        "mcpServers": [],
        "cwd": str(root),
    }


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
folder_params = st.fixed_dictionaries(
    {},
    optional={
        "cwd": json_values | st.sampled_from(["/", "/tmp", "/../..", "relative"]),
        "additionalDirectories": json_values | st.lists(st.sampled_from(["/", "/tmp"])),
        "sessionId": json_values,
    },
)


@settings(max_examples=300, deadline=None)
@given(
    method=st.sampled_from(["session/new", "session/load", "session/resume", "session/fork", "session/list", "x"]),
    params=json_values | folder_params,
    key=st.none() | st.integers() | st.text(max_size=4),
)  # fmt: skip
def test_any_message_is_passed_or_refused_and_never_raises(
    method: str, params: object, key: object
) -> None:
    message = json.dumps({"jsonrpc": "2.0", "id": key, "method": method, "params": params})
    if peek(message.encode()) is None:  # not JSON msgspec reads (a lone surrogate): refused before
        return
    checked = SessionFolders(("/tmp",)).check(message.encode())
    if isinstance(checked, Refused):
        assert checked.answer is not None
        assert json.loads(checked.answer)["error"]["code"] == -32602
    elif method == "x":
        assert checked == message.encode()
    else:
        folders = json.loads(checked)["params"]
        for path in [folders.get("cwd"), *(folders.get("additionalDirectories") or [])]:
            assert path is None or path == "/tmp" or path.startswith("/tmp/")


# Idle connections (the rule itself: test_acp_endpoint.py, on a clock the test moves) ------


async def test_the_servers_idle_timeout_closes_a_silent_acp_websocket(tmp_path: Path) -> None:
    async with (
        mounted(tmp_path, idle_timeout=0.05) as (server, launcher),
        server.ws("/acp/scripted") as ws,
    ):
        with pytest.raises(WebSocketDisconnect) as caught:
            await ws.receive_text()  # it says nothing: the server closes it
        assert (caught.value.code, caught.value.reason) == (
            1001,
            "idle for 0.05 s (no message either way, no turn running)",
        )
        await launcher.ended[0].wait()
