"""A task's budget in an eval (``max_tokens``, ``max_cost_usd``): an attempt over it is
stopped, recorded with kind ``budget``, graded failed without its verifier, and counted
apart in the report."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Self

import anyio
import pytest

from gemwire.batch import (
    BatchOptions,
    Task,
    eval as eval_module,
    read_results,
    read_tasks,
    run_batch,
)
from gemwire.batch.eval import EvalOptions, parse_attempt_id, run_eval
from gemwire.batch.eval_report import report
from gemwire.batch.results import ReportedCost
from gemwire.errors import InvalidOptions, InvalidTasks
from gemwire.events import (
    Event,
    FileChanged,
    MessageDelta,
    SessionUpdated,
    TokenUsage,
    TurnError,
    UsageReported,
)

pytestmark = pytest.mark.anyio


@dataclass
class Outcome:
    ok: bool = True
    error: TurnError | None = None
    answer: str = "done"
    files_changed: list[FileChanged] = field(default_factory=list)
    usage: TokenUsage | None = None
    session_id: str | None = "s"


def usage(tokens: int) -> TokenUsage:
    return TokenUsage(input_tokens=tokens - 10, output_tokens=10, total_tokens=tokens)


class Spender:
    """``qwen`` reports a cost of $0.10, then $0.30, then, on task ``big``, works on until
    stopped; ``gemini``
    reports its tokens as its turn ends (as stream-json does): 900 on task ``big``, else 100.
    Each writes the right answer first."""

    stopped: ClassVar[list[str]] = []

    def __init__(self, options: BatchOptions, eval_: EvalOptions, **_: object) -> None:
        pass

    async def run(self, task: Task, cwd: str, on_event: Callable[[Event], None]) -> Outcome:
        name, agent, _ = parse_attempt_id(task.id)
        (Path(cwd) / "answer").write_text("42")
        on_event(MessageDelta(agent=agent, session_id="s", text="working"))
        if agent == "qwen":
            for amount in (0.1, 0.3):
                data = {"used": 1, "size": 2, "cost": {"amount": amount, "currency": "USD"}}
                on_event(
                    SessionUpdated(agent="qwen", session_id="s", update="usage_update", data=data)
                )
            if name == "small":
                return Outcome()
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                Spender.stopped.append(task.id)
                raise
        spent = usage(900 if name == "big" else 100)
        on_event(UsageReported(agent="gemini", session_id="s", usage=spent))
        return Outcome(usage=spent)

    def agent_of(self, task: Task) -> str:
        return task.agent or "gemini"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        pass


async def test_an_attempt_over_its_budget_is_stopped_and_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(eval_module, "_Mixed", Spender)
    Spender.stopped = []
    (tmp_path / "repo").mkdir()
    common = {"template": "repo", "verify": 'test "$(cat answer)" = 42'}
    lines = [
        {"id": "big", "prompt": "p", "max_tokens": 500, "max_cost_usd": 0.2, **common},
        {"id": "small", "prompt": "p", "max_tokens": 500, **common},
    ]
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    tasks = read_tasks(tmp_path / "tasks.jsonl")
    out = tmp_path / "out"
    options = EvalOptions(agents=("gemini", "qwen"), batch=BatchOptions(concurrency=4))
    with anyio.fail_after(10):
        async with run_eval(tasks, out, options) as running:
            async for _ in running:
                pass
    results = {r.task_id: r for r in read_results(out)}
    assert Spender.stopped == ["big.qwen.1"]  # small has no cost budget: qwen's turn ended
    assert {
        i: (r.ok, r.error_kind, r.grade.status, r.grade.reward)
        for i, r in results.items()
        if r.grade
    } == {
        "big.gemini.1": (False, "budget", "failed", 0.0),
        "big.qwen.1": (False, "budget", "failed", 0.0),
        "small.gemini.1": (True, None, "passed", 1.0),
        "small.qwen.1": (True, None, "passed", 1.0),
    }
    big = results["big.qwen.1"]
    assert big.error == TurnError(
        kind="budget", message="stopped over budget: $0.3000, over the task's max_cost_usd $0.2"
    )
    cost = ReportedCost(amount=0.3, currency="USD")
    assert (big.answer, big.session_id, big.agent_cost) == ("working", "s", cost)
    assert big.grade is not None
    assert big.grade.output.startswith("not verified: the attempt went over its budget")
    gemini = results["big.gemini.1"]
    assert gemini.error is not None
    assert gemini.error.message == "stopped over budget: 900 tokens, over the task's max_tokens 500"
    assert gemini.usage == usage(900)
    agents = report(results.values()).agents
    assert {name: (a.errors, a.pass_at) for name, a in agents.items()} == {
        "gemini": ({"budget": 1}, {"1": 0.5}),
        "qwen": ({"budget": 1}, {"1": 0.5}),
    }


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"max_tokens": 0}, "max_tokens must be 1 or more"),
        ({"max_cost_usd": 0}, "max_cost_usd must be over 0"),
    ],
)
def test_a_budget_of_nothing_is_refused(
    tmp_path: Path, fields: dict[str, object], problem: str
) -> None:
    (tmp_path / "tasks.jsonl").write_text(json.dumps({"prompt": "p", **fields}) + "\n")
    with pytest.raises(InvalidTasks, match=f"line 1: {problem}"):
        read_tasks(tmp_path / "tasks.jsonl")


async def test_a_batch_refuses_a_budget_it_would_not_count(tmp_path: Path) -> None:
    tasks = [Task(id="a", prompt="p", max_tokens=10)]
    with pytest.raises(InvalidOptions, match="task a has a budget: gemwire eval runs those"):
        async with run_batch(tasks, tmp_path / "out"):
            pass
    assert not (tmp_path / "out").exists()
