"""``python -m gemwire.testing serve``: export lines for a shell, then serving until a
signal, which stops it cleanly (exit 0, nothing on stderr, the home removed)."""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from gemwire.testing import pinned_gemini

ROOT = Path(__file__).resolve().parents[2]
DONE = ROOT / "examples" / "done.json"


def start(scenario: Path = DONE, *, ignoring_ctrl_c: bool = False) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "gemwire.testing", "serve", str(scenario)]
    if ignoring_ctrl_c:  # as a shell script starts `… &`; exec keeps the ignored signal
        ignore = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
        argv = [sys.executable, "-c", ignore + "os.execv(sys.executable, sys.argv[1:])", *argv]
    return subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def shell_lines(server: subprocess.Popen[str]) -> list[str]:
    assert server.stdout is not None
    return server.stdout.read().splitlines()  # up to its end: it detaches once they are out


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_it_prints_the_shell_lines_serves_and_stops_cleanly_on_a_signal(signum: int) -> None:
    with start() as server:
        check_lines_and_stop(server, shell_lines(server), signum)


def test_started_ignoring_ctrl_c_it_goes_on_ignoring_it() -> None:
    # In a script, `eval "$(… serve … &)"` shares the terminal's process group with the
    # commands after it: Ctrl-C meant for one of them removed the shell's home and workspace.
    with start(ignoring_ctrl_c=True) as server:
        lines = shell_lines(server)
        status = Path(f"/proc/{server.pid}/status").read_text()
        masks = dict(line.split(":\t") for line in status.splitlines() if line.startswith("Sig"))
        assert int(masks["SigIgn"], 16) & (1 << (signal.SIGINT - 1))
        assert not int(masks["SigBlk"], 16) & (1 << (signal.SIGINT - 1))  # sigwait: never
        server.send_signal(signal.SIGINT)
        check_lines_and_stop(server, lines, signal.SIGTERM, until=": ")


def check_lines_and_stop(
    server: subprocess.Popen[str], lines: list[str], signum: int, until: str = " Ctrl-C or: "
) -> None:
    exports = {
        key: shlex.split(value)[0]
        for key, _, value in (
            line.removeprefix("export ").partition("=")
            for line in lines
            if line.startswith("export ")
        )
    }
    launcher = pinned_gemini()
    assert exports["PATH"].split(os.pathsep)[:2] == [
        str(Path(sys.executable).parent),
        str(launcher.parent),
    ]
    home = Path(exports["GEMINI_CLI_HOME"])
    assert exports["HOME"] == str(home)
    assert exports["GEMINI_API_KEY"] == "gemwire-fake-key"
    assert exports["GEMINI_CLI_TRUST_WORKSPACE"] == "true"
    assert exports["GEMINI_CLI_NO_RELAUNCH"] == "1"
    assert lines[-2] == f"cd {home.parent / 'workspace'}"
    url = exports["GOOGLE_GEMINI_BASE_URL"]
    assert lines[-1] == (
        f"# the scripted model serves {DONE} at {url} until{until}kill {server.pid}"
    )
    host, port = url.removeprefix("http://").split(":")
    socket.create_connection((host, int(port)), timeout=10).close()  # it serves
    server.send_signal(signum)
    assert server.wait(timeout=30) == 0
    assert server.stderr is not None
    assert server.stderr.read() == ""
    assert not home.parent.exists()


def test_a_bad_scenario_is_one_line_and_status_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"turns": [{"type": "reply", "chunks": [{"type": "text"}]}]}')
    with start(bad) as server:
        assert shell_lines(server) == []
        assert server.wait(timeout=30) == 2
        assert server.stderr is not None
        error = server.stderr.read()
    assert error == (
        f"error: {bad}: Object missing required field `text` - at `$.turns[0].chunks[0]`\n"
    )
