"""What a batch writes per finished task (a line of ``results.jsonl``) and the summary of them."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Literal, Protocol

import msgspec

from gemwire.events import FileChanged, TokenUsage, TurnError

__all__ = (
    "BatchSummary",
    "FileChange",
    "Grade",
    "Outcome",
    "ReportedCost",
    "TaskResult",
    "relative_to",
    "reported_cost",
    "summarize",
)


class Outcome(Protocol):
    """What a runner's result offers (`RunResult`, an ACP turn's result)."""

    @property
    def ok(self) -> bool: ...
    @property
    def error(self) -> TurnError | None: ...
    @property
    def answer(self) -> str: ...
    @property
    def files_changed(self) -> list[FileChanged]: ...
    @property
    def usage(self) -> TokenUsage | None: ...
    @property
    def session_id(self) -> str | None: ...


class FileChange(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    """Relative to the task's workspace when inside it."""
    change: str


class Grade(msgspec.Struct, frozen=True, kw_only=True):
    """The verdict of a task's ``verify`` on its workspace, once the agent had finished."""

    status: Literal["passed", "failed", "crashed", "timeout"]
    """``passed``: a reward of 1 or more; ``crashed`` (it could not start, was killed by a
    signal, or wrote a reward that is not a number) and ``timeout`` are the verifier's own
    errors: no reward, counted apart from a 0."""
    reward: float | None
    """1 for exit status 0, else 0; or the number written to ``$GEMWIRE_REWARD_FILE``."""
    exit_code: int | None
    output: str
    """The last 4 KiB of what the verifier wrote (stdout, then stderr)."""
    duration_s: float


class ReportedCost(msgspec.Struct, frozen=True, kw_only=True):
    """What the agent itself said the session cost (ACP's ``usage_update``), as it said it.

    `gemwire.events.AgentCost` carries the same figure as a turn's end does, with the turn's
    share of it; the two stay apart because both shapes are public: ``results.jsonl``'s
    ``agent_cost`` is ``{amount, currency}``, ``turn_completed``'s is ``{currency,
    session_total, turn}`` (docs/batch.md, docs/events.md)."""

    amount: float
    currency: str


class TaskResult(msgspec.Struct, frozen=True, kw_only=True):
    """How one task ended; one line of ``results.jsonl``, written once the task is over."""

    task_id: str
    ok: bool
    error: TurnError | None
    answer: str
    files_changed: list[FileChange]
    usage: TokenUsage | None
    duration_s: float
    """Wall-clock seconds of the last attempt."""
    attempts: int
    session_id: str | None
    resume: str | None
    """The command that continues the task's session, where there is one."""
    workspace: str
    agent: str
    grade: Grade | None = None
    """The verdict of the task's ``verify``, where it has one."""
    tool_calls: int = 0
    """Tool calls the agent started in the last attempt."""
    agent_cost: ReportedCost | None = None
    """The session's cost as the agent last reported it, where it does (gemwire's own
    estimate is ``usage.cost_usd``)."""

    @property
    def error_kind(self) -> str | None:
        return self.error.kind if self.error else None


class BatchSummary(msgspec.Struct, frozen=True, kw_only=True):
    """Counts, failures by kind, tokens and duration percentiles of finished tasks."""

    tasks: int
    ok: int
    failed: int
    by_error_kind: dict[str, int]
    input_tokens: int
    output_tokens: int
    total_tokens: int
    duration_p50_s: float
    duration_p90_s: float
    duration_max_s: float
    tokens_p50: int
    tokens_p90: int
    failed_tasks: list[str] = []
    """The ids of the failed tasks, in the order they finished (``retry_failed`` runs
    them again)."""


def summarize(results: Iterable[TaskResult]) -> BatchSummary:
    results = list(results)
    durations = sorted(r.duration_s for r in results)
    tokens = sorted(r.usage.total_tokens if r.usage else 0 for r in results)
    kinds = Counter(r.error_kind or "unknown" for r in results if not r.ok)
    ok = sum(r.ok for r in results)
    return BatchSummary(
        tasks=len(results),
        ok=ok,
        failed=len(results) - ok,
        by_error_kind=dict(kinds.most_common()),
        input_tokens=sum(r.usage.input_tokens for r in results if r.usage),
        output_tokens=sum(r.usage.output_tokens for r in results if r.usage),
        total_tokens=sum(tokens),
        duration_p50_s=_percentile(durations, 50),
        duration_p90_s=_percentile(durations, 90),
        duration_max_s=durations[-1] if durations else 0.0,
        tokens_p50=int(_percentile(tokens, 50)),
        tokens_p90=int(_percentile(tokens, 90)),
        failed_tasks=[r.task_id for r in results if not r.ok],
    )


def _percentile(ordered: list[float] | list[int], pct: int) -> float:
    """Nearest-rank percentile (0 for no values)."""
    if not ordered:
        return 0.0
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return float(ordered[rank - 1])


def reported_cost(data: object) -> ReportedCost | None:
    """The cost in an ACP ``usage_update``'s fields, where there is a well-formed one."""
    try:
        return msgspec.convert(data, ReportedCost) if data is not None else None
    except msgspec.ValidationError:
        return None


def relative_to(path: str, workspace: str) -> str:
    """A path inside the task's workspace relative to it (the record survives a move)."""
    try:
        return str(Path(path).relative_to(workspace))
    except ValueError:
        return path
