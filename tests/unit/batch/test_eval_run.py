"""``run_eval``: attempts as batch tasks, graded, resumed exactly once; ``eval report``."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Self

import anyio
import pytest
from click.testing import CliRunner
from kit.waiting import eventually

from gemwire.batch import BatchOptions, Task, TaskFinished, eval as eval_module, read_results
from gemwire.batch.eval import EvalOptions, expand, parse_attempt_id, run_eval
from gemwire.batch.output import STOPPED
from gemwire.cli import main
from gemwire.errors import InvalidOptions, InvalidTasks
from gemwire.events import Event, FileChanged, SessionUpdated, TokenUsage, TurnError

pytestmark = pytest.mark.anyio


@dataclass
class Outcome:
    ok: bool = True
    error: TurnError | None = None
    answer: str = "done"
    files_changed: list[FileChanged] = field(default_factory=list)
    usage: TokenUsage | None = None
    session_id: str | None = "s"


class Solver:
    """``qwen`` always writes the right answer; ``gemini`` only on even attempts."""

    calls: ClassVar[list[str]] = []
    hold: ClassVar[bool] = False
    """Second attempts never end (until the eval is left)."""

    def __init__(self, options: BatchOptions, eval_: EvalOptions, **_: object) -> None:
        self.stream_json = "gemini" in eval_.agents

    async def run(self, task: Task, cwd: str, on_event: Callable[[Event], None]) -> Outcome:
        Solver.calls.append(task.id)
        _, agent, n = parse_attempt_id(task.id)
        assert (task.agent is None) == (agent == "gemini")
        if n == 2 and Solver.hold:
            await anyio.sleep_forever()
        if agent == "qwen":  # an ACP agent that reports its cost, twice in a turn
            for amount in (0.25, 0.5):
                cost = {"amount": amount, "currency": "USD"}
                data = {"used": 1, "size": 2, "cost": cost}
                on_event(SessionUpdated(agent="qwen", update="usage_update", data=data))
        right = agent == "qwen" or n % 2 == 0
        (Path(cwd) / "answer").write_text("42" if right else "41")
        return Outcome()

    def agent_of(self, task: Task) -> str:
        return task.agent or "gemini"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        pass


@pytest.fixture
def tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Task]:
    Solver.calls = []
    Solver.hold = False
    monkeypatch.setattr(eval_module, "_Mixed", Solver)
    (tmp_path / "repo").mkdir()
    (tmp_path / "hidden").mkdir()
    (tmp_path / "hidden" / "check.sh").write_text('test "$(cat answer)" = 42\n')
    common = {
        "template": str(tmp_path / "repo"),
        "verify": "sh check.sh",
        "verify_files": str(tmp_path / "hidden"),
    }
    return [Task(id="one", prompt="p", **common), Task(id="two", prompt="p", attempts=1, **common)]  # type: ignore[arg-type]


OPTIONS = EvalOptions(agents=("gemini", "qwen"), k=2, batch=BatchOptions(concurrency=2))


def test_attempts_go_round_by_round_and_a_task_may_ask_for_fewer(tasks: list[Task]) -> None:
    assert [t.id for t in expand(tasks, OPTIONS)] == [
        "one.gemini.1",
        "one.qwen.1",
        "two.gemini.1",
        "two.qwen.1",
        "one.gemini.2",
        "one.qwen.2",
    ]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"agents": ()}, "name at least one agent"),
        ({"agents": ("gemini", "nope")}, "unknown agent 'nope'"),
        ({"agents": ("qwen", "qwen")}, "an agent is named twice"),
        ({"agents": ("qwen",), "k": 0}, "k must be 1 or more"),
    ],
)
def test_bad_options_are_refused(fields: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidOptions, match=message):
        EvalOptions(**fields)  # type: ignore[arg-type]


def test_an_attempt_id_over_128_characters_is_refused() -> None:
    with pytest.raises(InvalidTasks, match="over 128 characters"):
        expand([Task(id="x" * 125, prompt="p")], EvalOptions(agents=("qwen",)))


async def test_a_stopped_eval_resumes_with_every_attempt_once(
    tasks: list[Task], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    Solver.hold = True
    async with run_eval(tasks, out, OPTIONS) as running:
        finished = 0
        async for progress in running:
            finished += isinstance(progress, TaskFinished)
            if finished == 4:
                break  # leaving early stops the running attempts, as SIGTERM does
    assert len(read_results(out)) == 4
    Solver.hold = False
    async with run_eval(tasks, out, OPTIONS) as running:
        async for _ in running:
            pass
    lines = (out / "results.jsonl").read_text().splitlines()
    ids = [json.loads(line)["task_id"] for line in lines]
    assert sorted(ids) == sorted(t.id for t in expand(tasks, OPTIONS))
    graded = {json.loads(line)["task_id"]: json.loads(line)["grade"]["status"] for line in lines}
    assert graded == {
        "one.gemini.1": "failed",
        "one.gemini.2": "passed",
        "two.gemini.1": "failed",
        "one.qwen.1": "passed",
        "one.qwen.2": "passed",
        "two.qwen.1": "passed",
    }


async def test_the_report_command(tasks: list[Task], tmp_path: Path) -> None:
    out = tmp_path / "out"
    async with run_eval(tasks, out, OPTIONS) as running:
        async for _ in running:
            pass
    got = CliRunner().invoke(main, ["eval", "report", str(out), "--json"])
    assert got.exit_code == 0, got.output
    agents = json.loads(got.output)["agents"]
    assert {name: a["pass_at"] for name, a in agents.items()} == {
        # one: 1 pass of 2 (pass@1 .5, pass@2 1); two: 0 of 1 (pass@1 0, too few for pass@2)
        "gemini": {"1": 0.25, "2": 1.0},
        "qwen": {"1": 1.0, "2": 1.0},
    }
    assert agents["qwen"]["agent_cost_usd"] == 1.5  # the last report of each of 3 attempts
    assert agents["gemini"]["agent_cost_usd"] is None
    table = CliRunner().invoke(main, ["eval", "report", str(out)])
    assert table.exit_code == 0, table.output
    assert "one" in table.output
    assert "1/2" in table.output


async def test_an_eval_stopped_while_verifying_runs_that_attempt_again_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(eval_module, "_Mixed", Solver)
    (tmp_path / "repo").mkdir()
    started, release = tmp_path / "started", tmp_path / "release"
    verify = f"test -e {release} && exit 0; touch {started}; exec sleep 60"
    tasks = [Task(id="one", prompt="p", template=str(tmp_path / "repo"), verify=verify)]
    options = EvalOptions(agents=("qwen",))
    out = tmp_path / "out"

    async def consume() -> None:
        async with run_eval(tasks, out, options) as running:
            async for _ in running:
                pass

    async with anyio.create_task_group() as group:
        group.start_soon(consume)
        await eventually(started.exists)
        group.cancel_scope.cancel()  # as SIGTERM does
    assert read_results(out) == []
    stopped = (out / "events" / "one.qwen.1.jsonl.part").read_text().splitlines()
    assert json.loads(stopped[-1])["message"] == STOPPED
    release.touch()
    await consume()
    lines = (out / "results.jsonl").read_text().splitlines()
    assert [
        (json.loads(line)["task_id"], json.loads(line)["grade"]["status"]) for line in lines
    ] == [("one.qwen.1", "passed")]
