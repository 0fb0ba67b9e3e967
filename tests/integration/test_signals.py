"""SIGTERM, SIGHUP and Ctrl-C to `gemwire run` and to a program inside `run_gemini_sync`:
the run is cancelled cleanly (one final turn_completed), nothing is left running, and the
exit status says which signal it was."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kit.processes import alive

FAKE = Path(__file__).with_name("fake_gemini.py")
GEMWIRE = str(Path(sys.executable).with_name("gemwire"))


def fake_gemini(tmp_path: Path) -> tuple[str, dict[str, str], Path]:
    launcher = tmp_path / "gemini"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    launcher.chmod(0o755)
    pid_file = tmp_path / "fake.pid"
    env = {**os.environ, "FAKE_GEMINI_MODE": "hang", "FAKE_GEMINI_PID_FILE": str(pid_file)}
    return str(launcher), env, pid_file


def wait_for(pid_file: Path) -> int:
    deadline = time.monotonic() + 60
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, "the fake gemini never started"
        time.sleep(0.05)
    return int(pid_file.read_text())


def gone(pid: int, settle: float = 10.0) -> bool:
    return not alive(pid, settle)


@pytest.mark.parametrize(
    ("sig", "status", "message"),
    [
        (signal.SIGTERM, 143, "stopped by SIGTERM"),
        (signal.SIGHUP, 129, "stopped by SIGHUP (the terminal closed)"),
        (signal.SIGINT, 130, "interrupted (Ctrl-C)"),
    ],
)
def test_a_signal_to_gemwire_run_json_ends_with_a_cancelled_turn(
    tmp_path: Path, sig: signal.Signals, status: int, message: str
) -> None:
    executable, env, pid_file = fake_gemini(tmp_path)
    argv = [GEMWIRE, "run", "--json", "--executable", executable, "--cwd", str(tmp_path), "hi"]
    with subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as cli:
        fake = wait_for(pid_file)
        cli.send_signal(sig)
        out, err = cli.communicate(timeout=60)
    events = [json.loads(line) for line in out.splitlines()]
    assert (cli.returncode, err) == (status, b"")
    assert [e["type"] for e in events] == [
        "session_started",
        "message_delta",
        "turn_completed",
    ]
    turn = events[-1]
    assert (turn["ok"], turn["stop_reason"], turn["answer"]) == (False, "cancelled", "partial")
    assert turn["error"] == {"kind": "cancelled", "message": message, "exit_code": -15}
    assert gone(fake)


HOST = """
import signal, sys
from gemwire import GeminiOptions, run_gemini_sync
if sys.argv[2] == "handler":
    signal.signal(signal.SIGTERM, lambda *_: print("host handler ran", flush=True))
result = run_gemini_sync("hi", GeminiOptions(executable=sys.argv[1]))
print(result.error.kind, result.error.message, result.answer, flush=True)
"""


@pytest.mark.parametrize("host", ["default", "handler"])
def test_sigterm_to_a_program_in_run_gemini_sync_cancels_the_run_first(
    tmp_path: Path, host: str
) -> None:
    executable, env, pid_file = fake_gemini(tmp_path)
    argv = [sys.executable, "-c", HOST, executable, host]
    with subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=subprocess.PIPE) as program:
        fake = wait_for(pid_file)
        program.send_signal(signal.SIGTERM)
        out, _ = program.communicate(timeout=60)
    assert gone(fake)
    if host == "default":  # the run was cleaned up, then SIGTERM did what it does
        assert (program.returncode, out) == (-signal.SIGTERM, b"")
    else:
        assert program.returncode == 0
        assert out.decode().splitlines() == [
            "host handler ran",
            "cancelled stopped by SIGTERM partial",
        ]


FAKE_AGENT = Path(__file__).parent / "acp" / "fake_agent.py"


@pytest.mark.parametrize(
    ("sig", "status", "message"),
    [
        (signal.SIGTERM, 143, "stopped by SIGTERM"),
        (signal.SIGHUP, 129, "stopped by SIGHUP (the terminal closed)"),
        (signal.SIGINT, 130, "interrupted (Ctrl-C)"),
    ],
)
def test_a_signal_to_gemwire_acp_json_cancels_the_turn_and_stops_the_agent(
    tmp_path: Path, sig: signal.Signals, status: int, message: str
) -> None:
    pid_file = tmp_path / "agent.pid"
    agent = f'echo $$ > "{pid_file}"; exec "{sys.executable}" "{FAKE_AGENT}"'
    argv = [GEMWIRE, "acp", "--json", "--cwd", str(tmp_path), "hi", "--", "sh", "-c", agent]
    env = {**os.environ, "FAKE_ACP_MODE": "until_cancelled"}
    with subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as cli:
        assert cli.stdout is not None
        first = [json.loads(cli.stdout.readline()) for _ in range(3)]  # the turn is running
        cli.send_signal(sig)
        out, err = cli.communicate(timeout=60)
    events = [*first, *(json.loads(line) for line in out.splitlines())]
    assert (cli.returncode, err) == (status, b"")
    assert [e["type"] for e in events] == [
        "session_started",
        "user_message",
        "message_delta",
        "turn_completed",
    ]
    turn = events[-1]
    assert (turn["ok"], turn["stop_reason"], turn["answer"]) == (False, "cancelled", "working")
    # The agent ended the turn as cancelled; the message says why, as a Gemini run's does.
    assert turn["error"] == {"kind": "cancelled", "message": message, "exit_code": None}
    assert gone(wait_for(pid_file))


def test_a_second_ctrl_c_does_not_wait_for_an_agent_that_ignores_the_cancel(
    tmp_path: Path,
) -> None:
    pid_file, cancelled = tmp_path / "agent.pid", tmp_path / "cancelled"
    agent = f'echo $$ > "{pid_file}"; exec "{sys.executable}" "{FAKE_AGENT}"'
    argv = [GEMWIRE, "acp", "--json", "--cwd", str(tmp_path), "hi", "--", "sh", "-c", agent]
    env = {**os.environ, "FAKE_ACP_MODE": "ignore_cancel", "FAKE_ACP_CANCELLED": str(cancelled)}
    with subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as cli:
        assert cli.stdout is not None
        first = [json.loads(cli.stdout.readline()) for _ in range(3)]  # the turn is running
        cli.send_signal(signal.SIGINT)
        wait_for(cancelled)  # the agent got session/cancel, and ignores it
        cli.send_signal(signal.SIGINT)
        out, err = cli.communicate(timeout=60)
    events = [*first, *(json.loads(line) for line in out.splitlines())]
    assert (cli.returncode, err) == (130, b"")
    # No "the agent did not end the cancelled turn within 10 s": nobody waited for that.
    assert [e["type"] for e in events] == [
        "session_started",
        "user_message",
        "message_delta",
        "turn_completed",
    ]
    turn = events[-1]
    assert (turn["ok"], turn["stop_reason"], turn["answer"]) == (False, "cancelled", "working")
    assert turn["error"] == {
        "kind": "cancelled",
        "message": "interrupted (Ctrl-C)",
        "exit_code": None,
    }
    assert turn["agent"] == events[0]["agent"]
    assert gone(wait_for(pid_file))


ACP_HOST = """
import os, signal, sys
import anyio
from gemwire.runners.acp import AcpOptions, run_acp_sync
if sys.argv[2] == "handler":
    signal.signal(signal.SIGTERM, lambda *_: print("host handler ran", flush=True))
before = signal.getsignal(signal.SIGTERM)

async def ask(request):
    # Asked during the turn: once gemwire watches SIGTERM, say so, and never answer.
    with anyio.move_on_after(30):  # a generous bound, for a gemwire that never watches
        while signal.getsignal(signal.SIGTERM) is before:
            await anyio.sleep(0.01)
    if signal.getsignal(signal.SIGTERM) is before:
        print("SIGTERM not watched", flush=True)
        os._exit(3)
    print("asked", flush=True)
    await anyio.sleep_forever()

agent = f'echo $$ > "{sys.argv[3]}"; exec "{sys.executable}" "{sys.argv[1]}"'
result = run_acp_sync("hi", AcpOptions(command=("sh", "-c", agent)), permission_handler=ask)
print(result.stop_reason, result.error.kind, result.error.message, flush=True)
"""


@pytest.mark.parametrize("host", ["default", "handler"])
def test_sigterm_to_a_program_in_run_acp_sync_stops_the_turn_first(
    tmp_path: Path, host: str
) -> None:
    pid_file = tmp_path / "agent.pid"
    argv = [sys.executable, "-c", ACP_HOST, str(FAKE_AGENT), host, str(pid_file)]
    env = {**os.environ, "FAKE_ACP_MODE": "permission"}
    with subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=subprocess.PIPE) as program:
        assert program.stdout is not None
        assert program.stdout.readline() == b"asked\n"
        program.send_signal(signal.SIGTERM)
        out, _ = program.communicate(timeout=60)
    assert gone(wait_for(pid_file))
    if host == "default":  # the turn was stopped, then SIGTERM did what it does
        assert (program.returncode, out) == (-signal.SIGTERM, b"")
    else:
        assert program.returncode == 0
        assert out.decode().splitlines() == [
            "host handler ran",
            "cancelled cancelled stopped by SIGTERM",
        ]
