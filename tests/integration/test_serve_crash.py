"""A server killed mid-turn (SIGKILL) and started again: every client's turn ends.

`gemwire run --server` and a `gemwire.remote` turn follow a turn of a stand-in ACP agent
that never ends it; the server is killed and started again on the same port and state
folder; each client reconnects and gets the turn's ``turn_completed`` (error kind
``crashed``) that the new server logs for the turn the old one died in.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from kit.ports import free_port

from gemwire.events import MessageDelta
from gemwire.remote import connect

pytestmark = pytest.mark.anyio


TOKEN = "crash-token-0123456789"

HANGING_AGENT = r"""
import json, sys
def send(message):
    sys.stdout.write(json.dumps(message) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    message = json.loads(line)
    method, ident = message.get("method"), message.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": ident, "result": {"protocolVersion": 1,
              "agentCapabilities": {"loadSession": True},
              "agentInfo": {"name": "scripted", "version": "1"}}})
    elif method == "session/new":
        send({"jsonrpc": "2.0", "id": ident, "result": {"sessionId": "h-%d" % ident,
              "modes": {"currentModeId": "default", "availableModes": [{"id": "default", "name": "Ask"}]}}})
    elif method == "session/prompt":
        send({"jsonrpc": "2.0", "method": "session/update", "params": {
            "sessionId": message["params"]["sessionId"], "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "Working"}}}})
    elif ident is not None:
        send({"jsonrpc": "2.0", "id": ident, "result": {}})
"""


def serve(tmp_path: Path, port: int) -> subprocess.Popen[str]:
    agent = tmp_path / "hanging_agent.py"
    agent.write_text(HANGING_AGENT)
    process = subprocess.Popen(
        [
            sys.executable, "-m", "gemwire", "serve", "--port", str(port),
            "--root", str(tmp_path / "work"), "--state-dir", str(tmp_path / "state"),
            "--agent", f"hanging={sys.executable} {agent}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "GEMWIRE_TOKEN": TOKEN},
    )  # fmt: skip
    assert process.stdout is not None
    assert process.stdout.readline().startswith(f"gemwire serve: http://127.0.0.1:{port}/")
    return process


def run_on(url: str, cwd: Path) -> subprocess.Popen[str]:
    """``gemwire run --server URL --json`` of the hanging agent."""
    return subprocess.Popen(
        [sys.executable, "-m", "gemwire", "run", "--server", url, "--agent", "hanging",
         "--cwd", str(cwd), "--json", "go"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "GEMWIRE_TOKEN": TOKEN},
    )  # fmt: skip


async def test_a_server_killed_mid_turn_and_restarted_ends_every_clients_turn(
    tmp_path: Path,
) -> None:
    (tmp_path / "work").mkdir()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = serve(tmp_path, port)
    run = run_on(url, tmp_path / "work")
    try:
        assert run.stdout is not None
        with anyio.fail_after(60):
            async with connect(url, token=TOKEN) as remote:
                session = await remote.new_session("hanging", cwd=str(tmp_path / "work"))
                async with session.prompt("go") as turn:
                    async for event in turn:
                        if isinstance(event, MessageDelta):
                            # Both turns run: the run's first delta is out too.
                            line = await anyio.to_thread.run_sync(run.stdout.readline)
                            while json.loads(line)["type"] != "message_delta":
                                line = await anyio.to_thread.run_sync(run.stdout.readline)
                            killed = server
                            killed.send_signal(signal.SIGKILL)
                            killed.wait()
                            killed.stdout.close()  # type: ignore[union-attr]
                            server = serve(tmp_path, port)
            out, _ = await anyio.to_thread.run_sync(run.communicate)
    finally:
        for process in (run, server):
            if process.poll() is None:
                process.kill()
            process.communicate()
    assert turn.result.error is not None
    assert (turn.result.ok, turn.result.error.kind) == (False, "crashed")
    assert turn.result.error.message == (
        "the server stopped during this turn (it was killed, crashed or lost power): "
        "the turn never ended"
    )
    last = json.loads(out.splitlines()[-1])
    assert (last["type"], last["ok"], last["error"]["kind"]) == ("turn_completed", False, "crashed")
    assert run.returncode == 1
