"""Batch acp mode against agents that fail to start: each task fails, the batch goes on."""

from __future__ import annotations

from pathlib import Path

from gemwire.batch import BatchOptions, Task, read_results, run_batch_sync
from gemwire.runners.acp import AcpOptions


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
