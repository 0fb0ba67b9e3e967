"""The batch engine with a scripted executor: bounds, retries, backoff, quota, resume."""

from __future__ import annotations

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
from gemwire.errors import GeminiNotFound, InvalidOptions
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

    def __init__(self, script: dict[str, list[Outcome]] | None = None, delay: float = 0.01) -> None:
        self.script = {k: list(v) for k, v in (script or {}).items()}
        self.delay = delay
        self.running = self.most = 0
        self.calls: list[str] = []
        self.closed = False

    async def run(self, task: Task, cwd: str, on_event: Callable[[Event], None]) -> Outcome:
        self.calls.append(task.id)
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            on_event(MessageDelta(agent="gemini", text=task.prompt))
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
    scripted = executor(delay=0.02)
    with anyio.move_on_after(0.1):
        await run(tasks(30), tmp_path, BatchOptions(concurrency=2))
    first = [r.task_id for r in read_results(tmp_path)]
    assert 0 < len(first) < 30
    assert scripted.closed
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
