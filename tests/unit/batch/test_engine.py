"""The batch engine with a scripted executor: bounds, retries, backoff, quota, resume."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

import anyio
import pytest

from gemwire import GeminiOptions
from gemwire.batch import (
    BatchBackoff,
    BatchFinished,
    BatchOptions,
    BatchStarted,
    BatchStopped,
    Progress,
    Task,
    TaskFinished,
    TaskStarted,
    read_results,
    run_batch,
    runner as batch_runner,
)
from gemwire.batch.output import STOPPED
from gemwire.errors import BatchOutputError, GeminiNotFound, InvalidOptions, InvalidTasks
from gemwire.events import Event, FileChanged, MessageDelta, TokenUsage, TurnError

pytestmark = pytest.mark.anyio

FAST = BatchOptions(concurrency=3, backoff=0.01, max_backoff=0.05)


@dataclass
class Outcome:
    ok: bool = True
    error: TurnError | None = None
    answer: str = "done"
    files_changed: list[FileChanged] = field(default_factory=list)
    usage: TokenUsage | None = None
    session_id: str | None = "s"


def failed(kind: str) -> Outcome:
    return Outcome(ok=False, error=TurnError(kind=kind, message=f"{kind}!"))


class Scripted:
    """Each task's attempts end as scripted (then ok); records concurrency."""

    def __init__(
        self,
        script: dict[str, list[Outcome]] | None = None,
        delay: float = 0.01,
        hold: frozenset[str] = frozenset(),
    ) -> None:
        self.script = {k: list(v) for k, v in (script or {}).items()}
        self.delay = delay
        self.hold = hold
        """Tasks that never end (until the batch is left)."""
        self.holding = 0
        self.held = anyio.Condition()
        self.running = self.most = 0
        self.calls: list[str] = []
        self.closed = False

    async def run(self, task: Task, cwd: str, on_event: Callable[[Event], None]) -> Outcome:
        self.calls.append(task.id)
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            on_event(MessageDelta(agent="gemini", text=task.prompt))
            if task.id in self.hold:
                async with self.held:
                    self.holding += 1
                    self.held.notify_all()
                await anyio.sleep_forever()
            await anyio.sleep(self.delay)
            queue = self.script.get(task.id)
            return queue.pop(0) if queue else Outcome(answer=f"did {task.prompt}")
        finally:
            self.running -= 1

    def agent_of(self, task: Task) -> str:
        return "gemini"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.closed = True


@pytest.fixture
def executor(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Scripted]:
    def install(*args: object, **kwargs: object) -> Scripted:
        scripted = Scripted(*args, **kwargs)  # type: ignore[arg-type]
        monkeypatch.setattr(batch_runner, "_executor", lambda options: scripted)
        return scripted

    return install


def tasks(n: int) -> list[Task]:
    return [Task(id=f"t{i}", prompt=f"p{i}") for i in range(n)]


async def run(all_tasks: list[Task], out: Path, options: BatchOptions = FAST) -> list[Progress]:
    async with run_batch(all_tasks, out, options) as batch:
        return [p async for p in batch]


async def test_every_task_runs_once_within_the_bound(
    tmp_path: Path, executor: Callable[..., Scripted]
) -> None:
    scripted = executor()
    progress = await run(tasks(10), tmp_path)
    assert progress[0] == BatchStarted(tasks=10, skipped=0, mode="process", concurrency=3)
    assert isinstance(progress[-1], BatchFinished)
    assert (progress[-1].summary.ok, progress[-1].remaining) == (10, 0)
    assert scripted.most == 3
    assert scripted.closed
    assert sorted(scripted.calls) == sorted(t.id for t in tasks(10))
    results = read_results(tmp_path)
    assert sorted((r.task_id, r.answer, r.attempts) for r in results) == sorted(
        (f"t{i}", f"did p{i}", 1) for i in range(10)
    )
    assert (tmp_path / "events" / "t3.jsonl").read_text() == (
        '{"type":"message_delta","agent":"gemini","session_id":null,"text":"p3"}\n'
    )
    finished = [p for p in progress if isinstance(p, TaskFinished)]
    assert [p.done for p in finished] == list(range(1, 11))


async def test_a_rerun_skips_finished_tasks(
    tmp_path: Path, executor: Callable[..., Scripted]
) -> None:
    executor()
    await run(tasks(4), tmp_path)
    scripted = executor()
    progress = await run(tasks(6), tmp_path)
    assert progress[0] == BatchStarted(tasks=2, skipped=4, mode="process", concurrency=3)
    assert sorted(scripted.calls) == ["t4", "t5"]
    assert sorted(r.task_id for r in read_results(tmp_path)) == [f"t{i}" for i in range(6)]


async def test_failures_are_final_except_crashes_which_are_retried(
    tmp_path: Path, executor: Callable[..., Scripted]
) -> None:
    executor(
        {
            "t0": [failed("timeout")],
            "t1": [failed("crashed")],
            "t2": [failed("crashed"), failed("crashed"), failed("crashed")],
        }
    )
    progress = await run(tasks(4), tmp_path)
    by_id = {r.task_id: r for r in read_results(tmp_path)}
    assert {k: (r.ok, r.error_kind, r.attempts) for k, r in by_id.items()} == {
        "t0": (False, "timeout", 1),
        "t1": (True, None, 2),
        "t2": (False, "crashed", 3),
        "t3": (True, None, 1),
    }
    starts = [(p.task_id, p.attempt) for p in progress if isinstance(p, TaskStarted)]
    assert sorted(starts) == [
        ("t0", 1), ("t1", 1), ("t1", 2), ("t2", 1), ("t2", 2), ("t2", 3), ("t3", 1)
    ]  # fmt: skip
    assert progress[-1].summary.by_error_kind == {"crashed": 1, "timeout": 1}  # type: ignore[union-attr]


async def test_running_counts_the_tasks_between_their_start_and_their_end(
    tmp_path: Path, executor: Callable[..., Scripted]
) -> None:
    executor({"t1": [failed("crashed")], "t4": [failed("crashed"), failed("crashed")]})
    progress = await run(tasks(6), tmp_path)
    running: set[str] = set()
    counts = []
    for p in progress:
        if isinstance(p, TaskStarted):
            running.add(p.task_id)  # a retry of a running task counts once
            counts.append(p.running)
            assert p.running == len(running)
        elif isinstance(p, TaskFinished):
            running.discard(p.result.task_id)
            assert p.running == len(running)
    assert max(counts) == FAST.concurrency
    assert not running


async def test_a_429_storm_backs_the_whole_batch_off_then_completes(
    tmp_path: Path, executor: Callable[..., Scripted]
) -> None:
    executor({f"t{i}": [failed("rate_limited")] * 2 for i in range(3)})
    progress = await run(
        tasks(5), tmp_path, BatchOptions(concurrency=2, backoff=0.01, max_attempts=3)
    )
    backoffs = [p for p in progress if isinstance(p, BatchBackoff)]
    assert len(backoffs) == 6
    assert all(0 < p.seconds <= 300 for p in backoffs)
    assert {r.task_id: (r.ok, r.attempts) for r in read_results(tmp_path)} == {
        "t0": (True, 3), "t1": (True, 3), "t2": (True, 3), "t3": (True, 1), "t4": (True, 1)
    }  # fmt: skip


async def test_a_quota_stops_new_tasks_and_leaves_them_for_later(
    tmp_path: Path, executor: Callable[..., Scripted]
) -> None:
    executor({"t1": [failed("quota")]}, delay=0.05)
    progress = await run(tasks(8), tmp_path, BatchOptions(concurrency=2, backoff=0.01))
    stopped = [p for p in progress if isinstance(p, BatchStopped)]
    assert stopped == [BatchStopped(reason="quota exhausted (t1): quota!")]
    finished = {r.task_id for r in read_results(tmp_path)}
    assert "t1" not in finished
    assert len(finished) < 7
    assert progress[-1].remaining == 8 - len(finished)  # type: ignore[union-attr]
    scripted = executor()
    await run(tasks(8), tmp_path)
    assert sorted(scripted.calls) == sorted({f"t{i}" for i in range(8)} - finished)
    assert len(read_results(tmp_path)) == 8


async def test_leaving_early_loses_no_finished_result_and_resumes(
    tmp_path: Path, executor: Callable[..., Scripted]
) -> None:
    # t0-t2 end; every later task runs until the batch is left (no clock decides which).
    scripted = executor(hold=frozenset(f"t{i}" for i in range(3, 30)))
    async with run_batch(tasks(30), tmp_path, BatchOptions(concurrency=2)) as batch:
        async for progress in batch:
            if isinstance(progress, TaskFinished) and progress.done == 3:
                async with scripted.held:  # both slots taken by tasks that never end
                    while scripted.holding < 2:
                        await scripted.held.wait()
                break
    first = [r.task_id for r in read_results(tmp_path)]
    assert sorted(first) == ["t0", "t1", "t2"]
    assert scripted.closed
    assert not (tmp_path / "events" / "t3.jsonl").exists()
    # The tasks left running (t3, t4) say where their events end, and why.
    for stopped in ("t3", "t4"):
        part = (tmp_path / "events" / f"{stopped}.jsonl.part").read_text().splitlines()
        assert [json.loads(line) for line in part] == [
            {"type": "message_delta", "agent": "gemini", "session_id": None, "text": f"p{stopped[1:]}"},
            {"type": "notice", "agent": "gemini", "session_id": None, "severity": "warning",
             "message": STOPPED, "source": "gemwire"},
        ]  # fmt: skip
    again = executor()
    await run(tasks(30), tmp_path)
    ids = [r.task_id for r in read_results(tmp_path)]
    assert sorted(ids) == sorted(t.id for t in tasks(30))  # each exactly once
    assert not set(again.calls) & set(first)


async def test_a_missing_cli_ends_the_batch_before_any_task(tmp_path: Path) -> None:
    options = BatchOptions(gemini=GeminiOptions(executable=str(tmp_path / "no-gemini")))
    with pytest.raises(GeminiNotFound, match="no-gemini"):
        await run(tasks(3), tmp_path / "out", options)
    assert read_results(tmp_path / "out") == []


async def test_a_task_naming_another_agent_needs_acp_mode(tmp_path: Path) -> None:
    with pytest.raises(InvalidOptions, match="task t1 names agent 'claude'"):
        await run([Task(id="t0", prompt="p"), Task(id="t1", prompt="p", agent="claude")], tmp_path)


async def test_an_output_folder_that_fails_ends_the_batch_and_keeps_what_finished(
    tmp_path: Path, executor: Callable[..., Scripted]
) -> None:
    (tmp_path / "events" / "t2.jsonl.part").mkdir(parents=True)  # t2's events cannot be written
    executor()
    with pytest.raises(BatchOutputError, match=r"cannot write .*t2\.jsonl\.part: Is a directory"):
        await run(tasks(5), tmp_path, BatchOptions(concurrency=1))
    assert [r.task_id for r in read_results(tmp_path)] == ["t0", "t1"]
    (tmp_path / "events" / "t2.jsonl.part").rmdir()
    again = executor()
    await run(tasks(5), tmp_path)
    assert sorted(again.calls) == ["t2", "t3", "t4"]
    ids = [r.task_id for r in read_results(tmp_path)]
    assert (ids[:2], sorted(ids)) == (["t0", "t1"], [f"t{i}" for i in range(5)])


async def test_tasks_are_checked_before_the_output_folder_is_touched(tmp_path: Path) -> None:
    with pytest.raises(InvalidTasks, match="task 2: id 'a' differs from 'A' \\(task 1\\)"):
        await run([Task(id="A", prompt="p"), Task(id="a", prompt="p")], tmp_path / "out")
    with pytest.raises(InvalidTasks, match="task 1: unknown agent 'goose'"):
        await run(
            [Task(id="t", prompt="p", agent="goose")], tmp_path / "out", BatchOptions(mode="acp")
        )
    assert not (tmp_path / "out").exists()


async def test_retry_failed_runs_only_the_failed_tasks_again(
    tmp_path: Path, executor: Callable[..., Scripted]
) -> None:
    executor({"t1": [failed("timeout")], "t3": [failed("auth")]})
    first = await run(tasks(4), tmp_path)
    assert sorted(first[-1].summary.failed_tasks) == ["t1", "t3"]  # type: ignore[union-attr]
    plain = executor()
    await run(tasks(4), tmp_path)
    assert plain.calls == []  # a failure is a finished task
    again = executor({"t3": [failed("auth")]})
    progress = await run(tasks(4), tmp_path, BatchOptions(retry_failed=True, concurrency=3))
    assert sorted(again.calls) == ["t1", "t3"]
    assert progress[0] == BatchStarted(tasks=2, skipped=2, mode="process", concurrency=3)
    summary = progress[-1].summary  # type: ignore[union-attr]
    assert (summary.tasks, summary.ok, summary.failed_tasks) == (4, 3, ["t3"])
    results = {r.task_id: r.ok for r in read_results(tmp_path)}
    assert results == {"t0": True, "t1": True, "t2": True, "t3": False}
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["task_id"] for line in lines) == [
        "t0", "t1", "t1", "t2", "t3", "t3"
    ]  # fmt: skip
