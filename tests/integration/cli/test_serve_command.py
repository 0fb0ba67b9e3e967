"""``gemwire serve`` as a command: the URL line, ``--port 0``, refusals, SIGTERM."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from kit.waiting import eventually_blocking

from gemwire.cli import main

URL = re.compile(r"^gemwire serve: http://127\.0\.0\.1:(\d+)/\?token=(\S+)\n$")


def test_a_non_loopback_host_without_a_token_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["serve", "--host", "0.0.0.0", "--state-dir", str(tmp_path)],
        env={"GEMWIRE_TOKEN": ""},
    )
    assert result.exit_code == 2
    assert result.output == (
        "gemwire serve: refusing to bind 0.0.0.0 (not loopback) without a token: "
        "give a strong one in GEMWIRE_TOKEN or --token-file\n"
    )


def test_without_the_extra_it_says_what_to_install() -> None:
    code = (
        "import sys; sys.modules['hypercorn'] = None; sys.argv = ['gemwire', 'serve'];"
        "from gemwire.__main__ import main; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "gemwire serve needs the [serve] extra: pip install 'gemwire[serve]'\n"


def test_port_0_prints_one_url_line_serves_and_exits_0_on_sigterm(tmp_path: Path) -> None:
    env = {**os.environ, "GEMWIRE_TOKEN": "tok-123456789"}
    process = subprocess.Popen(
        [sys.executable, "-m", "gemwire", "serve", "--port", "0", "--state-dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=Path(__file__).parent,  # the root: a state folder inside one is refused
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = URL.match(line)
        assert match is not None, line
        assert match.group(2) == "tok-123456789"
        base = f"http://127.0.0.1:{match.group(1)}"
        assert httpx.get(f"{base}/health", timeout=30).json()["status"] == "ok"
        refused = httpx.get(f"{base}/v1/sessions", timeout=30)
        assert refused.status_code == 401
        login = httpx.get(f"{base}/?token=tok-123456789", timeout=30)
        assert login.status_code == 303
        process.send_signal(signal.SIGTERM)
        rest, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0
    assert "tok-123456789" not in stderr
    assert rest == ""  # logs go to stderr only
    assert 'GET /v1/sessions HTTP/1.1" 401' in stderr
    assert 'GET /?token=*** HTTP/1.1" 303' in stderr


def test_a_thousand_idle_connections_leave_it_answering(tmp_path: Path) -> None:
    env = {**os.environ, "GEMWIRE_TOKEN": "tok-123456789"}
    process = subprocess.Popen(
        [sys.executable, "-m", "gemwire", "serve", "--port", "0", "--state-dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=Path(__file__).parent,  # the root: a state folder inside one is refused
    )
    idle: list[socket.socket] = []
    try:
        assert process.stdout is not None
        match = URL.match(process.stdout.readline())
        assert match is not None
        port = int(match.group(1))
        # Connected, and never a byte sent.
        idle.extend(socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(1000))
        half = b"GET /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % port
        for sock in idle[:100]:  # or half a request
            sock.sendall(half)
        base = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{base}/health", timeout=30).json()["status"] == "ok"
        refused = httpx.get(f"{base}/v1/sessions", timeout=30)
        assert refused.status_code == 401
        process.send_signal(signal.SIGTERM)
        # Winding down (the listener closed first; the half requests hold it a second): a
        # second SIGTERM is held, not the default action's kill.
        eventually_blocking(lambda: not _accepts(port))
        assert process.poll() is None
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    finally:
        for sock in idle:
            sock.close()
        if process.poll() is None:
            process.kill()
            process.wait()
        assert process.stdout is not None
        process.stdout.close()
    assert process.returncode == 0


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except ConnectionRefusedError:
        return False
    return True


def test_a_state_dir_that_cannot_be_made_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    result = CliRunner().invoke(main, ["serve", "--state-dir", str(tmp_path / "file" / "s")])
    assert result.exit_code == 2
    assert f"--state-dir {tmp_path / 'file' / 's'}: Not a directory" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("value", ["noequals", "=cmd", "name="])
def test_a_malformed_agent_option_is_a_usage_error(value: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["serve", "--agent", value, "--state-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert f"{value!r}: expected NAME=COMMAND" in result.output
