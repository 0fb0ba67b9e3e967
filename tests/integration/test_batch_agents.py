"""Batch acp mode against fake agents: start-up failures, timeouts, error kinds, discovery."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gemwire.batch import BatchOptions, Task, read_results, run_batch_sync
from gemwire.runners.acp import AcpOptions

FAKE = Path(__file__).with_name("batch_fake_agent.py")
GEMWIRE = str(Path(sys.executable).with_name("gemwire"))


def fake(tmp_path: Path, mode: str, **changes: object) -> AcpOptions:
    """The fake agent, run in its mode ``default`` (chosen: gemwire does not know it)."""
    env = {"BATCH_AGENT_MODE": mode, "BATCH_AGENT_STATE": str(tmp_path / "state")}
    command = (sys.executable, str(FAKE))
    return AcpOptions(command=command, cwd=str(tmp_path), env=env, mode="default", **changes)  # type: ignore[arg-type]


def test_an_agent_that_dies_at_start_fails_each_task_and_the_batch_ends(tmp_path: Path) -> None:
    options = BatchOptions(
        mode="acp",
        acp=AcpOptions(command=("sh", "-c", "echo nope >&2; exit 3"), cwd=str(tmp_path)),
        max_attempts=2,
        concurrency=2,
    )
    tasks = [Task(id=f"t{i}", prompt="hi") for i in range(3)]
    summary = run_batch_sync(tasks, tmp_path / "out", options)
    assert (summary.tasks, summary.failed, summary.by_error_kind) == (3, 3, {"crashed": 3})
    results = read_results(tmp_path / "out")
    assert sorted((r.task_id, r.attempts) for r in results) == [("t0", 2), ("t1", 2), ("t2", 2)]
    assert all("exited" in r.error.message for r in results if r.error)


def test_the_task_timeout_bounds_an_agent_that_never_answers_initialize(tmp_path: Path) -> None:
    # Without the bound the task waits out the 300 s request timeout.
    options = BatchOptions(mode="acp", acp=fake(tmp_path, "mute"), concurrency=2)
    tasks = [Task(id="t0", prompt="hi", timeout=0.5), Task(id="t1", prompt="hi", timeout=0.5)]
    summary = run_batch_sync(tasks, tmp_path / "out", options)
    assert summary.by_error_kind == {"timeout": 2}
    results = read_results(tmp_path / "out")
    assert sorted((r.task_id, r.attempts, r.error.message) for r in results if r.error) == [
        (t, 1, "the task took longer than 0.5 s (waiting for the agent to start)")
        for t in ("t0", "t1")
    ]
    # It never said its name: the program it runs as names it.
    assert {r.agent for r in results} == {f"acp:{Path(sys.executable).name}"}


def test_a_session_new_rejected_with_429_is_rate_limited_and_retried(tmp_path: Path) -> None:
    options = BatchOptions(
        mode="acp", acp=fake(tmp_path, "busy_once"), backoff=0.01, max_backoff=0.01
    )
    summary = run_batch_sync([Task(id="t0", prompt="hi")], tmp_path / "out", options)
    assert (summary.ok, summary.failed) == (1, 0)
    [result] = read_results(tmp_path / "out")
    assert (result.attempts, result.answer, result.agent) == (2, "done hi", "acp:batch-fake")
    events = (tmp_path / "out" / "events" / "t0.jsonl").read_text().splitlines()
    assert {json.loads(line)["agent"] for line in events} == {"acp:batch-fake"}


def launcher(tmp_path: Path, mode: str) -> Path:
    """An executable that runs the fake agent as ``gemini --acp`` would be run, named as
    Gemini CLI names itself."""
    path = tmp_path / "bin" / "fake-gemini"
    path.parent.mkdir()
    env = f"BATCH_AGENT_MODE={mode} BATCH_AGENT_NAME=gemini-cli"
    path.write_text(f'#!/bin/sh\n{env} exec {sys.executable} {FAKE} "$@"\n')
    path.chmod(0o755)
    return path


def tasks_file(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "tasks.jsonl"
    path.write_text(
        "".join(json.dumps({"id": f"t{i}", "prompt": f"p{i}"}) + "\n" for i in range(n))
    )
    return path


def test_batch_timeout_reaches_acp_mode(tmp_path: Path) -> None:
    gemini = launcher(tmp_path, "hang")
    out = tmp_path / "out"
    argv = [GEMWIRE, "batch", str(tasks_file(tmp_path, 2)), "-o", str(out), "--mode", "acp"]
    done = subprocess.run(
        [*argv, "--timeout", "0.5", "--executable", str(gemini), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    results = read_results(out)
    assert sorted((r.task_id, r.error.kind, r.error.message) for r in results if r.error) == [
        (t, "timeout", "the task took longer than 0.5 s") for t in ("t0", "t1")
    ]


def test_acp_mode_finds_gemini_as_process_mode_does(tmp_path: Path) -> None:
    gemini = launcher(tmp_path, "echo")
    out = tmp_path / "out"
    environ = {**os.environ, "GEMINI_CLI_PATH": str(gemini), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [GEMWIRE, "batch", str(tasks_file(tmp_path, 2)), "-o", str(out), "--mode", "acp"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=environ,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    results = read_results(out)
    assert sorted((r.task_id, r.ok, r.answer, r.agent) for r in results) == [
        ("t0", True, "done p0", "acp:gemini-cli"),
        ("t1", True, "done p1", "acp:gemini-cli"),
    ]
