"""gemwire batch against the real Gemini CLI 0.61.0 and the scripted model."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from kit.batch_tasks import check_outputs, scenario, tasks_file

from gemwire.batch import (
    BatchBackoff,
    BatchOptions,
    Progress,
    TaskFinished,
    read_results,
    read_tasks,
    run_batch,
    run_batch_sync,
)
from gemwire.testing import (
    Fail,
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    pinned_gemini,
)
from gemwire.testing.agents import isolated_agent

pytestmark = pytest.mark.e2e

GEMWIRE = str(Path(sys.executable).with_name("gemwire"))


def test_process_mode_runs_each_task_in_its_own_copy(tmp_path: Path) -> None:
    # Two rounds of -j 3: every slot is reused, each task gets a fresh copy, and three tasks
    # writing the same out.txt at once would clobber a shared one. Each task is a Node
    # start (~1.5 CPU-seconds): 50 took 88 % of the timeout on an idle 2-core machine.
    n = 6
    with ScriptedModel(scenario(n)) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        options = BatchOptions(
            concurrency=3,
            gemini=env.gemini_options(approval_mode="yolo"),
        )
        summary = run_batch_sync(read_tasks(tasks_file(tmp_path, n)), tmp_path / "out", options)
        assert model.problems == []
    assert (summary.tasks, summary.ok, summary.failed) == (n, n, 0)
    check_outputs(tmp_path / "out", n)


def test_sigterm_mid_batch_then_resume_finishes_each_task_once(tmp_path: Path) -> None:
    # -j 2: at most the two running tasks are finished when SIGTERM lands (a third has yet
    # to start its CLI), so the resume has tasks left to run, and skips the others.
    n = 4
    out = tmp_path / "out"
    with ScriptedModel(scenario(n)) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        argv = [
            GEMWIRE, "batch", str(tasks_file(tmp_path, n)),
            "-o", str(out), "-j", "2", "-y", "--executable", str(pinned_gemini()), "--json",
        ]  # fmt: skip
        environ = {**env.environ(), "PATH": os.environ["PATH"]}
        with subprocess.Popen(argv, env=environ, stdout=subprocess.PIPE, text=True) as process:
            assert process.stdout is not None
            for line in process.stdout:  # until the first task is finished
                if json.loads(line)["type"] == "task_finished":
                    break
            process.send_signal(signal.SIGTERM)
            rest = process.stdout.read()
            assert process.wait(timeout=60) == 143
        assert "batch_finished" not in rest
        first = {r.task_id for r in read_results(out)}
        assert 1 <= len(first) < n
        assert env.live_processes() == []
    # The stopped tasks' turns were served already: a fresh model serves them again.
    with ScriptedModel(scenario(n)) as model:
        environ["GOOGLE_GEMINI_BASE_URL"] = model.url
        again = subprocess.run(
            argv, env=environ, capture_output=True, text=True, timeout=300, check=False
        )
        assert again.returncode == 0, again.stdout
        started = [json.loads(line) for line in again.stdout.splitlines()]
        assert started[0] == {
            "type": "batch_started",
            "tasks": n - len(first),
            "skipped": len(first),
            "mode": "process",
            "concurrency": 2,
        }
    check_outputs(out, n)


def test_a_bad_tasks_file_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "tasks.jsonl"
    bad.write_text('{"prompt": "a"}\n{"prompt": "b", "template": "missing"}\n')
    done = subprocess.run(
        [GEMWIRE, "batch", str(bad), "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "line 2: template 'missing' is not a folder" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_acp_mode_runs_50_tasks_on_one_agent_process(tmp_path: Path) -> None:
    n = 50
    with ScriptedModel(scenario(n)) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        options = BatchOptions(
            mode="acp",
            concurrency=8,
            gemini=env.gemini_options(approval_mode="yolo"),
        )
        summary = run_batch_sync(read_tasks(tasks_file(tmp_path, n)), tmp_path / "out", options)
        assert model.problems == []
    assert (summary.tasks, summary.ok, summary.failed) == (n, n, 0)
    check_outputs(tmp_path / "out", n, agent="acp:gemini-cli")
    assert len({r.session_id for r in read_results(tmp_path / "out")}) == n


def test_an_agent_crash_retries_only_its_own_tasks(tmp_path: Path) -> None:
    n = 6
    out = tmp_path / "out"
    with ScriptedModel(scenario(n, write=False)) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        options = BatchOptions(
            mode="acp",
            concurrency=3,
            gemini=env.gemini_options(approval_mode="yolo"),
        )

        async def kill_the_agent_once_a_task_finished() -> None:
            async with run_batch(read_tasks(tasks_file(tmp_path, n)), out, options) as batch:
                killed = False
                async for progress in batch:
                    if isinstance(progress, TaskFinished) and not killed:
                        for pid in env.live_processes(settle=0):
                            os.kill(pid, signal.SIGKILL)
                        killed = True

        anyio.run(kill_the_agent_once_a_task_finished)
    results = read_results(out)
    assert sorted((r.task_id, r.ok, r.answer) for r in results) == [
        (f"task-{i}", True, f"done {i}") for i in range(n)
    ]
    retried = [r.task_id for r in results if r.attempts == 2]
    assert 1 <= len(retried) <= 3  # only those running (-j 3) when the agent died
    assert all(r.attempts == 1 for r in results if r.task_id not in retried)


def test_a_429_storm_backs_off_and_the_batch_completes(tmp_path: Path) -> None:
    n = 3  # task-0 beside the storm (-j 2), task-2 after task-0
    storm = [Fail(429, retry_delay=0, when="task number 1.", repeat=3)]
    answers = [Reply([Text(f"done {i}")], when=f"task number {i}.") for i in range(n)]
    out = tmp_path / "out"
    with ScriptedModel(Scenario(turns=[*storm, *answers])) as model:
        # Gemini CLI tries once (its own retries back off for seconds): every 429 is the
        # batch's to back off from.
        env = IsolatedGemini(model.url, root=tmp_path, settings={"general": {"maxAttempts": 1}})
        options = BatchOptions(
            concurrency=2,
            backoff=0.5,
            max_attempts=4,
            gemini=env.gemini_options(),
        )

        async def go() -> list[Progress]:
            async with run_batch(read_tasks(tasks_file(tmp_path, n)), out, options) as batch:
                return [p async for p in batch]

        progress = anyio.run(go)
    results = {r.task_id: r for r in read_results(out)}
    assert {k: (r.ok, r.answer) for k, r in results.items()} == {
        f"task-{i}": (True, f"done {i}") for i in range(n)
    }
    assert results["task-1"].attempts == 4
    assert all(results[f"task-{i}"].attempts == 1 for i in (0, 2))
    backoffs = [p for p in progress if isinstance(p, BatchBackoff)]
    assert [p.reason for p in backoffs] == ["rate limited (task-1)"] * 3


def test_acp_mode_drives_another_agent(tmp_path: Path) -> None:
    n = 3
    scenario = Scenario(turns=[Reply([Text("Hi from Claude.")], repeat=n)])
    with ScriptedModel(scenario) as model:
        env = isolated_agent("claude", model, root=tmp_path / "claude", version="0.16.2")
        options = BatchOptions(mode="acp", concurrency=n, acp=env.acp_options(permissions="all"))
        summary = run_batch_sync(read_tasks(tasks_file(tmp_path, n)), tmp_path / "out", options)
        assert env.live_processes() == []
    assert (summary.ok, summary.failed) == (n, 0)
    results = read_results(tmp_path / "out")
    assert sorted((r.task_id, r.answer) for r in results) == [
        (f"task-{i}", "Hi from Claude.") for i in range(n)
    ]
    assert len({r.session_id for r in results}) == n
    # The agent as its events name it (from initialize), in every result.
    agent = json.loads((tmp_path / "out" / "events" / "task-0.jsonl").read_text().split("\n")[0])
    assert {r.agent for r in results} == {agent["agent"]} == {"acp:@zed-industries/claude-code-acp"}
