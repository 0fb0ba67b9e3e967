"""An eval's results, per agent and per task: pass@k, rewards, errors, cost and time.

pass@k is the unbiased estimator of Chen et al. 2021 ("Evaluating Large Language Models
Trained on Code"): for a task with ``n`` graded attempts of which ``c`` passed, the chance
that ``k`` of them drawn without replacement hold a pass, ``1 - C(n-c, k) / C(n, k)``,
averaged over the tasks with at least ``k`` graded attempts; for every ``k`` up to the most
graded attempts of a task (with every attempt graded, up to ``-k``: then every task counts).

An attempt whose verifier crashed or timed out has no grade: it is left out of ``n`` and
counted under ``errors`` (``verify_crashed``, ``verify_timeout``), never as a fail. An
attempt whose agent failed (a timeout, a crash) is still graded on what it left, and its
kind is counted under ``errors`` too. A task without ``verify`` passes when its turn ended ok.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from math import comb

import msgspec

from gemwire.batch.eval import parse_attempt_id
from gemwire.batch.results import TaskResult

__all__ = ("AgentReport", "EvalReport", "TaskRow", "pass_at_k", "report")


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that ``k`` of ``n`` attempts, ``c`` of them passes, hold at least one pass."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@{k} of {c} passes in {n} attempts")
    return 1.0 - comb(n - c, k) / comb(n, k)


class TaskRow(msgspec.Struct, frozen=True, kw_only=True):
    task: str
    agent: str
    attempts: int
    graded: int
    passed: int
    reward_mean: float | None
    errors: dict[str, int]


class AgentReport(msgspec.Struct, frozen=True, kw_only=True):
    pass_at: dict[str, float]
    """k (as a string) to the mean pass@k over the tasks with k graded attempts or more."""
    reward_mean: float | None
    """Over the graded attempts."""
    attempts: int
    graded: int
    errors: dict[str, int]
    """The agents' error kinds and the verifiers' (``verify_crashed``, ``verify_timeout``)."""
    cost_usd: float | None
    """Estimated from gemwire's price table, over the attempts it could price."""
    agent_cost_usd: float | None
    """What the agent itself reported (in USD), over the attempts it reported one for."""
    tokens: int
    seconds: float
    """Wall time of the attempts, added up."""


class EvalReport(msgspec.Struct, frozen=True, kw_only=True):
    agents: dict[str, AgentReport]
    tasks: list[TaskRow]


def report(results: Iterable[TaskResult]) -> EvalReport:
    """The report of an eval's results (`read_results` of its folder)."""
    by_agent: dict[str, list[TaskResult]] = defaultdict(list)
    by_task: dict[tuple[str, str], list[TaskResult]] = defaultdict(list)
    for result in results:
        task, agent, _ = parse_attempt_id(result.task_id)
        by_agent[agent].append(result)
        by_task[agent, task].append(result)
    rows = [_row(task, agent, attempts) for (agent, task), attempts in sorted(by_task.items())]
    return EvalReport(
        agents={
            agent: _agent([r for r in rows if r.agent == agent], attempts)
            for agent, attempts in by_agent.items()
        },
        tasks=rows,
    )


def _reward(result: TaskResult) -> float | None:
    if result.grade is None:
        return 1.0 if result.ok else 0.0
    return result.grade.reward


def _errors(results: list[TaskResult]) -> dict[str, int]:
    kinds: Counter[str] = Counter()
    for result in results:
        if result.error is not None:
            kinds[result.error.kind] += 1
        if result.grade is not None and result.grade.reward is None:
            kinds[f"verify_{result.grade.status}"] += 1
    return dict(sorted(kinds.items()))


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _row(task: str, agent: str, results: list[TaskResult]) -> TaskRow:
    rewards = [r for r in map(_reward, results) if r is not None]
    return TaskRow(
        task=task,
        agent=agent,
        attempts=len(results),
        graded=len(rewards),
        passed=sum(r >= 1 for r in rewards),
        reward_mean=_mean(rewards),
        errors=_errors(results),
    )


def _pass_at(rows: list[TaskRow], k: int) -> float:
    counted = [row for row in rows if row.graded >= k]
    return sum(pass_at_k(row.graded, row.passed, k) for row in counted) / len(counted)


def _agent(rows: list[TaskRow], results: list[TaskResult]) -> AgentReport:
    rewards = [r for r in map(_reward, results) if r is not None]
    most = max((row.graded for row in rows), default=0)
    reported = [
        r.agent_cost.amount
        for r in results
        if r.agent_cost is not None and r.agent_cost.currency == "USD"
    ]
    costs = [r.usage.cost_usd for r in results if r.usage and isinstance(r.usage.cost_usd, float)]
    return AgentReport(
        pass_at={str(k): _pass_at(rows, k) for k in range(1, most + 1)},
        reward_mean=_mean(rewards),
        attempts=len(results),
        graded=len(rewards),
        errors=_errors(results),
        cost_usd=round(sum(costs), 6) if costs else None,
        agent_cost_usd=round(sum(reported), 6) if reported else None,
        tokens=sum(r.usage.total_tokens for r in results if r.usage),
        seconds=round(sum(r.duration_s for r in results), 3),
    )
