"""Batch acp mode with an agent gemwire does not know the modes of: every task refused
before its prompt, saying why (a batch always answers permissions by callback), and run
once a mode is chosen for it (`AcpOptions.mode`)."""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec

from gemwire.batch import BatchOptions, Task, read_results, run_batch_sync
from gemwire.runners.acp import AcpOptions

FAKE = Path(__file__).with_name("batch_fake_agent.py")


def test_every_task_is_refused_until_a_mode_is_chosen(tmp_path: Path) -> None:
    env = {"BATCH_AGENT_MODE": "echo", "BATCH_AGENT_STATE": str(tmp_path / "state")}
    agent = AcpOptions(command=(sys.executable, str(FAKE)), cwd=str(tmp_path), env=env)
    tasks = [Task(id="t0", prompt="hi"), Task(id="t1", prompt="hi")]
    summary = run_batch_sync(tasks, tmp_path / "out", BatchOptions(mode="acp", acp=agent))
    assert (summary.ok, summary.failed, summary.by_error_kind) == (0, 2, {"agent": 2})
    refused = (
        "acp:batch-fake is not an agent gemwire knows the modes of, so it cannot make sure "
        "the agent asks before acting (a permission preset answers only what an agent "
        "asks): pass --mode (AcpOptions.mode) with the one of its modes (default, yolo) "
        "you choose to run it in, or --permissions all to allow everything"
    )
    results = read_results(tmp_path / "out")
    assert sorted((r.task_id, r.attempts, r.error.message) for r in results if r.error) == [
        ("t0", 1, refused),
        ("t1", 1, refused),
    ]
    assert all(r.answer == "" for r in results)  # no prompt reached the agent

    chosen = BatchOptions(mode="acp", acp=msgspec.structs.replace(agent, mode="default"))
    summary = run_batch_sync(tasks, tmp_path / "again", chosen)
    assert (summary.ok, summary.failed) == (2, 0)
    assert sorted(r.answer for r in read_results(tmp_path / "again")) == ["done hi", "done hi"]
