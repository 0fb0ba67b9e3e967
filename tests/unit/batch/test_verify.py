"""A task's ``verify`` grades its attempt: exit status, reward file, and its own errors."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

import pytest

from gemwire.batch import BatchOptions, Task, read_results, read_tasks, run_batch, runner
from gemwire.batch.results import Grade
from gemwire.batch.verify import TAIL, verify
from gemwire.errors import InvalidTasks
from gemwire.events import Event, FileChanged, TokenUsage, ToolCallStarted, TurnError

pytestmark = pytest.mark.anyio


def task(verify_command: str | list[str], **fields: object) -> Task:
    return Task(id="t", prompt="p", verify=verify_command, **fields)  # type: ignore[arg-type]


async def grade(tmp_path: Path, command: str | list[str], **fields: object) -> Grade:
    return await verify(task(command, **fields), str(tmp_path))


@pytest.mark.parametrize(
    ("command", "status", "reward", "exit_code"),
    [
        ("true", "passed", 1.0, 0),
        ("exit 3", "failed", 0.0, 3),
        ('echo 0.25 > "$GEMWIRE_REWARD_FILE"', "failed", 0.25, 0),
        ('echo 1 > "$GEMWIRE_REWARD_FILE"; exit 1', "passed", 1.0, 1),
        ('echo lots > "$GEMWIRE_REWARD_FILE"', "crashed", None, 0),
        ('echo nan > "$GEMWIRE_REWARD_FILE"', "crashed", None, 0),
        ("no-such-program-here", "crashed", None, 127),
        ("kill -KILL $$", "crashed", None, -9),
        ("sh -c 'kill -SEGV $$'", "crashed", None, 139),
    ],
)
async def test_the_verdict(
    tmp_path: Path, command: str, status: str, reward: float | None, exit_code: int | None
) -> None:
    got = await grade(tmp_path, command)
    assert (got.status, got.reward, got.exit_code) == (status, reward, exit_code)


async def test_an_argv_that_cannot_start_is_a_crash_not_a_zero(tmp_path: Path) -> None:
    got = await grade(tmp_path, ["/no/such/verifier"])
    assert (got.status, got.reward, got.exit_code) == ("crashed", None, None)
    assert got.output.startswith("the verifier could not start")


async def test_a_verifier_that_outlasts_its_time_is_a_timeout(tmp_path: Path) -> None:
    got = await grade(
        tmp_path, [sys.executable, "-c", "import time; time.sleep(60)"], verify_timeout=0.2
    )
    assert (got.status, got.reward, got.exit_code) == ("timeout", None, None)


async def test_only_the_tail_of_the_output_is_kept(tmp_path: Path) -> None:
    got = await grade(tmp_path, [sys.executable, "-c", "print('x' * 1_000_000 + 'END')"])
    assert got.status == "passed"
    assert len(got.output) == TAIL
    assert got.output.endswith("END\n")


async def test_it_runs_in_the_workspace_with_the_verify_files_copied_in(tmp_path: Path) -> None:
    hidden = tmp_path / "hidden"
    (hidden / "tests").mkdir(parents=True)
    (hidden / "tests" / "check.sh").write_text('test "$(cat answer)" = 42\n')
    work = tmp_path / "work"
    work.mkdir()
    (work / "answer").write_text("42")
    got = await verify(task("sh tests/check.sh", verify_files=str(hidden)), str(work))
    assert got.status == "passed"


def test_the_tasks_file_checks_the_grading_fields(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    lines = [
        {"id": "a", "prompt": "p", "verify": "  "},
        {"id": "b", "prompt": "p", "verify_files": "repo", "verify": "true"},
        {"id": "c", "prompt": "p", "verify_files": "repo", "template": "repo"},
        {"id": "d", "prompt": "p", "verify": "true", "attempts": 0, "verify_timeout": 0},
        {"id": "e", "prompt": "p", "verify": "true", "template": "repo", "verify_files": "nope"},
    ]
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(InvalidTasks) as caught:
        read_tasks(path)
    assert caught.value.problems == [
        "line 1: empty verify",
        "line 2: verify_files needs template (each attempt a fresh copy without them)",
        "line 3: verify_files without verify",
        "line 4: verify_timeout must be over 0",
        "line 4: attempts must be 1 or more",
        "line 5: verify_files 'nope' is not a folder",
    ]


@dataclass
class Outcome:
    ok: bool = True
    error: TurnError | None = None
    answer: str = "done"
    files_changed: list[FileChanged] = field(default_factory=list)
    usage: TokenUsage | None = None
    session_id: str | None = "s"


class Writes:
    """An agent that writes its prompt to ``answer`` after looking for the hidden tests."""

    saw_hidden: list[bool]

    def __init__(self) -> None:
        self.saw_hidden = []

    async def run(self, task: Task, cwd: str, on_event: Callable[[Event], None]) -> Outcome:
        self.saw_hidden.append((Path(cwd) / "check.sh").exists())
        on_event(
            ToolCallStarted(
                agent="gemini", call_id="1", name="write_file", title="write", kind="edit"
            )
        )
        (Path(cwd) / "answer").write_text(task.prompt)
        return Outcome()

    def agent_of(self, task: Task) -> str:
        return "gemini"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        pass


async def test_a_batch_grades_each_task_after_its_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = Writes()
    monkeypatch.setattr(runner, "_executor", lambda options: agent)
    (tmp_path / "repo").mkdir()
    (tmp_path / "hidden").mkdir()
    (tmp_path / "hidden" / "check.sh").write_text('test "$(cat answer)" = 42\n')
    tasks = [
        Task(
            id=name,
            prompt=prompt,
            template=str(tmp_path / "repo"),
            verify="sh check.sh",
            verify_files=str(tmp_path / "hidden"),
        )
        for name, prompt in (("right", "42"), ("wrong", "41"))
    ]
    async with run_batch(tasks, tmp_path / "out", BatchOptions(concurrency=1)) as batch:
        async for _ in batch:
            pass
    assert agent.saw_hidden == [False, False]
    graded = {
        r.task_id: (r.grade.status if r.grade else None, r.tool_calls)
        for r in read_results(tmp_path / "out")
    }
    assert graded == {"right": ("passed", 1), "wrong": ("failed", 1)}
