"""HTTP/2, as the transport RFD requires of Streamable HTTP, on ``gemwire serve`` as it
ships (`kit.h2_server`: hypercorn, `gemwire.server.run`) driven through the ACP flow by curl
(nghttp2, a client we did not write) over h2c by prior knowledge, over TLS by ALPN and over
HTTP/1.1, each answer's protocol asserted; and gemwire's own client, which offers h2 and
falls back to HTTP/1.1 against a server without it (uvicorn, as the tests' other servers).
The agent is the scripted one, in process.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import uvicorn
from click.testing import CliRunner
from kit.h2_server import h2_server, self_signed
from kit.server import TOKEN, FakeStreamLauncher, make_config
from kit.threaded_server import serve_in_thread
from kit.wire import ThreadLauncher

from gemwire.cli import main
from gemwire.runners.acp import AcpClient, AcpOptions
from gemwire.runners.acp.http_channel import StreamableHttpChannel
from gemwire.runners.acp.websocket_channel import WebSocketChannel
from gemwire.server import create_app
from gemwire.server.run import bind
from gemwire.testing import ScriptedAgent

CURL = shutil.which("curl")
needs_curl_h2 = pytest.mark.skipif(
    CURL is None
    or "HTTP2"
    not in subprocess.run([CURL, "-V"], check=False, capture_output=True, text=True).stdout,
    reason="no curl with HTTP/2 (nghttp2)",
)
AUTH = f"Authorization: Bearer {TOKEN}"


def rpc(request_id: int, method: str, **params: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


class Curl:
    """curl with one protocol switch (``--http2-prior-knowledge``, ``--http2``) and its
    CA, against one ACP URL."""

    def __init__(self, url: str, switch: str, cacert: str | None = None) -> None:
        assert CURL is not None
        self.url = url
        self.base = [CURL, "-sS", switch, "-H", AUTH]
        if cacert is not None:
            self.base += ["--cacert", cacert]

    def post(self, body: str, **headers: str) -> tuple[str, dict[str, str], str]:
        """The status line, the headers (lower-cased) and the body of a POST."""
        command = [*self.base, "-i", "-H", "Content-Type: application/json", "-d", body]
        for name, value in headers.items():
            command += ["-H", f"{name}: {value}"]
        done = subprocess.run(
            [*command, self.url], check=True, capture_output=True, text=True, timeout=20
        )
        head, content = re.split(r"\r?\n\r?\n", done.stdout, maxsplit=1)
        status, *lines = head.splitlines()
        fields = dict(line.split(": ", 1) for line in lines)
        return status.strip(), {k.lower(): v for k, v in fields.items()}, content

    def stream(self, **headers: str) -> Stream:
        # -D -, not -i: curl holds -i's head back until the body's first bytes.
        command = [*self.base, "-N", "-D", "-", "-H", "Accept: text/event-stream"]
        for name, value in headers.items():
            command += ["-H", f"{name}: {value}"]
        return Stream([*command, self.url])


class Stream:
    """An SSE GET read by curl as it comes (a thread turns its lines into a queue)."""

    def __init__(self, command: list[str]) -> None:
        self._process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.status = self._line().strip()

    def _pump(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self._lines.put(line.rstrip("\r\n"))
        self._lines.put("")

    def _line(self) -> str:
        return self._lines.get(timeout=20)

    def next(self) -> Any:
        deadline = time.monotonic() + 20
        while not (line := self._line()).startswith("data:"):
            assert self._process.poll() is None or line, "the stream ended"
            assert time.monotonic() < deadline, "no message came"
        return json.loads(line[5:])

    def wait(self) -> int:
        """curl's exit status, once the server ended the stream."""
        code = self._process.wait(20)
        assert self._process.stdout is not None
        self._process.stdout.close()
        return code

    def close(self) -> None:
        self._process.terminate()
        self._process.wait(10)
        assert self._process.stdout is not None
        self._process.stdout.close()


async def _say(agent: ScriptedAgent, session_id: str, params: dict[str, Any]) -> str:
    await agent.say(session_id, "over the wire")
    return "end_turn"


def _launcher() -> ThreadLauncher:
    return ThreadLauncher(on_prompt=_say)


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("h2")
    (base / "root").mkdir()
    (base / "state").mkdir()
    return base / "root", base / "state"


@pytest.fixture(scope="module")
def h2c(folders: tuple[Path, Path]) -> Iterator[str]:
    root, state = folders
    with h2_server(str(root), str(state), _launcher()) as url:
        yield url


def _acp_flow(curl: Curl, cwd: str, version: str) -> None:
    """initialize → the connection's stream → session/new → the session's stream →
    session/prompt, each answer in ``version`` and as the RFD says."""
    status, headers, body = curl.post(rpc(0, "initialize", protocolVersion=1))
    assert status == f"{version} 200"
    connection = headers["acp-connection-id"]
    assert json.loads(body)["result"]["connectionId"] == connection
    events = curl.stream(**{"Acp-Connection-Id": connection})
    replies = None
    try:
        assert events.status == f"{version} 200"
        status, _, body = curl.post(
            rpc(1, "session/new", cwd=cwd, mcpServers=[]), **{"Acp-Connection-Id": connection}
        )
        assert (status, body) == (f"{version} 202", "")
        opened = events.next()
        assert opened["id"] == 1
        session = opened["result"]["sessionId"]
        ids = {"Acp-Connection-Id": connection, "Acp-Session-Id": session}
        replies = curl.stream(**ids)
        assert replies.status == f"{version} 200"
        prompt = rpc(
            2, "session/prompt", sessionId=session, prompt=[{"type": "text", "text": "hi"}]
        )
        status, _, body = curl.post(prompt, **ids)
        assert (status, body) == (f"{version} 202", "")
        update = replies.next()
        assert (update["method"], update["params"]["sessionId"]) == ("session/update", session)
        assert update["params"]["update"] == {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "over the wire"},
        }
        assert replies.next() == {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}
    finally:
        events.close()
        if replies is not None:
            replies.close()


@needs_curl_h2
def test_curl_runs_the_acp_flow_over_h2c_by_prior_knowledge(
    h2c: str, folders: tuple[Path, Path]
) -> None:
    _acp_flow(Curl(f"{h2c}/acp/scripted", "--http2-prior-knowledge"), str(folders[0]), "HTTP/2")


@needs_curl_h2
def test_curl_runs_the_acp_flow_over_tls_with_h2_by_alpn(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    (tmp_path / "root").mkdir()
    (tmp_path / "state").mkdir()
    root, state = str(tmp_path / "root"), str(tmp_path / "state")
    with h2_server(root, state, _launcher(), ssl_certfile=cert, ssl_keyfile=key) as url:
        assert url.startswith("https://")
        _acp_flow(Curl(f"{url}/acp/scripted", "--http2", cacert=cert), root, "HTTP/2")


@needs_curl_h2
def test_the_http2_server_still_speaks_http11_to_curl(h2c: str, folders: tuple[Path, Path]) -> None:
    _acp_flow(Curl(f"{h2c}/acp/scripted", "--http1.1"), str(folders[0]), "HTTP/1.1")


async def _our_client_turn(url: str, cwd: Path) -> tuple[str | None, list[str]]:
    channel = StreamableHttpChannel(url, token=TOKEN)
    options = AcpOptions(cwd=str(cwd), permissions="all")
    with anyio.fail_after(20):
        async with AcpClient(options, channel=channel) as client:
            session = await client.new_session()
            async with session.prompt("hi") as turn:
                kinds = [event.type async for event in turn]
    return channel.http_version, kinds


TURN = ["session_started", "user_message", "message_delta", "turn_completed"]


@pytest.mark.anyio
async def test_our_client_speaks_h2c_to_the_http2_server(
    h2c: str, folders: tuple[Path, Path]
) -> None:
    assert await _our_client_turn(f"{h2c}/acp/scripted", folders[0]) == ("HTTP/2", TURN)


@pytest.mark.anyio
async def test_our_client_falls_back_to_http11_against_a_server_without_h2c(
    tmp_path: Path,
) -> None:
    (tmp_path / "root").mkdir()
    sock = bind("127.0.0.1", 0)
    config = make_config(
        str(tmp_path / "root"), str(tmp_path / "state"), port=sock.getsockname()[1]
    )
    app = create_app(config, launcher=_launcher(), stream_launcher=FakeStreamLauncher())
    served = uvicorn.Config(app, ws="wsproto", log_level="warning")
    with serve_in_thread(lambda tg: uvicorn.Server(served), sock):
        assert await _our_client_turn(f"{config.url}/acp/scripted", tmp_path / "root") == (
            "HTTP/1.1",
            TURN,
        )


@pytest.mark.anyio
async def test_the_websocket_path_works_on_the_http2_server(
    h2c: str, folders: tuple[Path, Path]
) -> None:
    url = h2c.replace("http://", "ws://") + "/acp/scripted"
    channel = WebSocketChannel(url, token=TOKEN)
    options = AcpOptions(cwd=str(folders[0]), permissions="all")
    with anyio.fail_after(20):
        async with AcpClient(options, channel=channel) as client:
            session = await client.new_session()
            async with session.prompt("hi") as turn:
                kinds = [event.type async for event in turn]
    assert kinds == TURN


@needs_curl_h2
def test_stopping_ends_the_h2_streams_and_stops_the_agents(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    root = str(tmp_path / "root")
    launcher = _launcher()
    with h2_server(root, str(tmp_path / "state"), launcher) as url:
        curl = Curl(f"{url}/acp/scripted", "--http2-prior-knowledge")
        _, headers, _ = curl.post(rpc(0, "initialize", protocolVersion=1))
        connection = {"Acp-Connection-Id": headers["acp-connection-id"]}
        events = curl.stream(**connection)
        assert events.status == "HTTP/2 200"
        curl.post(rpc(1, "session/new", cwd=root, mcpServers=[]), **connection)
        assert events.next()["id"] == 1
    # The server wound down before it closed: the stream ended in order, the agent stopped.
    assert events.wait() == 0
    [channel] = launcher.channels
    assert channel.closed.is_set()


@needs_curl_h2
def test_gemwire_serve_answers_h2c_upgrade_and_http11_and_exits_0_on_sigterm(
    tmp_path: Path,
) -> None:
    """The default server, as a process: h2c by prior knowledge and by ``Upgrade: h2c``,
    HTTP/1.1, on one port; SIGTERM ends it with 0 and no error logged."""
    assert CURL is not None
    (tmp_path / "root").mkdir()
    env = {**os.environ, "HOME": str(tmp_path), "GEMWIRE_TOKEN": TOKEN}
    server = subprocess.Popen(
        [sys.executable, "-m", "gemwire", "serve", "--port", "0",
         "--root", str(tmp_path / "root"), "--state-dir", str(tmp_path / "state")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split(": ", 1)[1].split("/?", 1)[0]
        versions = [
            subprocess.run(
                [CURL, "-sS", switch, "-w", " %{http_version}", f"{url}/ready"],
                check=True, capture_output=True, text=True, timeout=20,
            ).stdout
            for switch in ("--http2-prior-knowledge", "--http2", "--http1.1")
        ]  # fmt: skip
        assert versions == ['{"ready":true} 2', '{"ready":true} 2', '{"ready":true} 1.1']
    finally:
        server.send_signal(signal.SIGTERM)
        _, stderr = server.communicate(timeout=20)
    assert server.returncode == 0, stderr
    assert [line for line in stderr.splitlines() if " INFO " not in line] == []
    assert stderr.count('"GET /ready HTTP/2" 200') == 2
    assert stderr.count('"GET /ready HTTP/1.1" 200') == 1


def test_serve_takes_http2_still_a_no_op(tmp_path: Path) -> None:
    """Old command lines keep working: ``--http2`` is parsed (and the command goes on to
    its checks: here the refusal of a non-loopback address without a token)."""
    result = CliRunner().invoke(
        main,
        ["serve", "--http2", "--host", "0.0.0.0", "--state-dir", str(tmp_path)],
        env={"GEMWIRE_TOKEN": ""},
    )
    assert (result.exit_code, result.output) == (
        2,
        (
            "gemwire serve: refusing to bind 0.0.0.0 (not loopback) without a token: "
            "give a strong one in GEMWIRE_TOKEN or --token-file\n"
        ),
    )


@pytest.mark.anyio
async def test_our_client_speaks_h2_by_alpn_over_tls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = self_signed(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", cert)  # httpx trusts the test's certificate
    (tmp_path / "root").mkdir()
    root, state = tmp_path / "root", str(tmp_path / "state")
    with h2_server(str(root), state, _launcher(), ssl_certfile=cert, ssl_keyfile=key) as url:
        assert await _our_client_turn(f"{url}/acp/scripted", root) == ("HTTP/2", TURN)
