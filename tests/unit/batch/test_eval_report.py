"""pass@k (Chen et al. 2021) and the eval report built from results lines."""

from __future__ import annotations

from itertools import combinations

import msgspec
import pytest
from hypothesis import given, strategies as st

from gemwire.batch.eval_report import pass_at_k, report
from gemwire.batch.results import Grade, ReportedCost, TaskResult
from gemwire.events import TokenUsage, TurnError


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (1, 0, 1, 0.0),
        (1, 1, 1, 1.0),
        (5, 2, 1, 0.4),
        (5, 2, 2, 0.7),  # 1 - C(3,2)/C(5,2) = 1 - 3/10
        (5, 2, 3, 0.9),  # 1 - C(3,3)/C(5,3) = 1 - 1/10
        (5, 2, 4, 1.0),
        (10, 1, 5, 0.5),
        (4, 1, 2, 0.5),  # 1 - C(3,2)/C(4,2) = 1 - 3/6
        (6, 3, 3, 0.95),  # 1 - C(3,3)/C(6,3) = 1 - 1/20
    ],
)
def test_known_values(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected)


@given(
    st.integers(1, 9).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n)))
)
def test_it_is_the_share_of_k_subsets_holding_a_pass(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    attempts = [True] * c + [False] * (n - c)
    subsets = list(combinations(attempts, k))
    assert pass_at_k(n, c, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))


@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 1), (3, 1, 0), (3, 1, 4), (2, -1, 1)])
def test_impossible_counts_are_refused(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError, match="pass@"):
        pass_at_k(n, c, k)


def line(
    batch_id: str,
    status: str | None,
    *,
    error: str | None = None,
    tokens: int = 10,
    cost: float | None = None,
    agent_cost: ReportedCost | None = None,
) -> TaskResult:
    reward = {"passed": 1.0, "failed": 0.0}.get(status or "")
    grade = (
        None
        if status is None
        else Grade(status=status, reward=reward, exit_code=0, output="", duration_s=0.1)  # type: ignore[arg-type]
    )
    usage = TokenUsage(input_tokens=tokens, output_tokens=0, total_tokens=tokens)
    if cost is not None:
        usage = msgspec.structs.replace(usage, cost_usd=cost)
    return TaskResult(
        task_id=batch_id,
        ok=error is None,
        error=None if error is None else TurnError(kind=error, message=error),
        answer="",
        files_changed=[],
        usage=usage,
        duration_s=2.0,
        attempts=1,
        session_id=None,
        resume=None,
        workspace="/w",
        agent="gemini",
        grade=grade,
        agent_cost=agent_cost,
    )


def test_the_report_per_agent_and_per_task() -> None:
    results = [
        line("a.gemini.1", "passed", cost=0.01),
        line("a.gemini.2", "failed", error="timeout", cost=0.02),
        line("b.x.y.gemini.1", "failed"),
        line("b.x.y.gemini.2", "failed"),
        line("a.qwen.1", "passed", agent_cost=ReportedCost(amount=0.5, currency="USD")),
        line("a.qwen.2", "crashed", agent_cost=ReportedCost(amount=9.0, currency="EUR")),
        line("b.x.y.qwen.1", "timeout"),
        line("b.x.y.qwen.2", "passed"),
    ]
    got = msgspec.to_builtins(report(results))
    assert got["agents"] == {
        "gemini": {
            "pass_at": {"1": 0.25, "2": 0.5},
            "reward_mean": 0.25,
            "attempts": 4,
            "graded": 4,
            "errors": {"timeout": 1},
            "cost_usd": 0.03,
            "agent_cost_usd": None,
            "tokens": 40,
            "seconds": 8.0,
        },
        "qwen": {
            "pass_at": {"1": 1.0},
            "reward_mean": 1.0,
            "attempts": 4,
            "graded": 2,
            "errors": {"verify_crashed": 1, "verify_timeout": 1},
            "cost_usd": None,
            "agent_cost_usd": 0.5,
            "tokens": 40,
            "seconds": 8.0,
        },
    }
    assert [(r["task"], r["agent"], r["graded"], r["passed"]) for r in got["tasks"]] == [
        ("a", "gemini", 2, 1),
        ("b.x.y", "gemini", 2, 0),
        ("a", "qwen", 1, 1),
        ("b.x.y", "qwen", 1, 1),
    ]
