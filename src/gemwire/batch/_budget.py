"""An eval attempt's budget (a task's ``max_tokens``, ``max_cost_usd``): what it counts, and
when it is spent.

Tokens are the turn's as gemwire counts them (``usage`` events, the turn's end); the cost is
what the agent reported in USD (ACP's ``usage_update``), else gemwire's estimate
(``usage.cost_usd``). Gemini CLI over stream-json reports its usage only as its turn ends, so
its budget is checked then; an ACP agent's reported cost is checked as it comes.
"""

from __future__ import annotations

import msgspec

from gemwire.batch.results import Outcome, reported_cost
from gemwire.batch.tasks import Task
from gemwire.events import (
    Event,
    FileChanged,
    MessageDelta,
    SessionUpdated,
    TokenUsage,
    TurnCompleted,
    TurnError,
    UsageReported,
)

__all__ = ("KIND", "Budget", "Spent")

KIND = "budget"
"""The error kind of an attempt stopped, or ended, over its budget."""


class Spent(msgspec.Struct, frozen=True, kw_only=True):
    """An attempt stopped over its budget before its turn ended: what it had done so far."""

    error: TurnError
    answer: str
    files_changed: list[FileChanged]
    usage: TokenUsage | None
    session_id: str | None
    ok: bool = False


class Budget:
    """Counts one attempt against its task's budget, event by event."""

    def __init__(self, task: Task) -> None:
        self._max_tokens = task.max_tokens
        self._max_usd = task.max_cost_usd
        self._tokens = 0
        self._estimate: float | None = None
        self._reported: float | None = None
        self._answer: list[str] = []
        self._files: list[FileChanged] = []
        self._usage: TokenUsage | None = None
        self._session: str | None = None
        self.over: str | None = None
        """Why the attempt is over its budget, once it is."""

    @staticmethod
    def of(task: Task) -> Budget | None:
        """The task's budget, where it has one."""
        return (
            Budget(task) if task.max_tokens is not None or task.max_cost_usd is not None else None
        )

    def spent_by(self, event: Event) -> str | None:
        """Why the attempt must stop now that ``event`` came (once; else None)."""
        self._session = event.session_id or self._session
        if isinstance(event, MessageDelta):
            self._answer.append(event.text)
        elif isinstance(event, FileChanged):
            self._files.append(event)
        elif isinstance(event, UsageReported | TurnCompleted) and event.usage is not None:
            self._count(event.usage)
        if isinstance(event, SessionUpdated) and event.update == "usage_update":
            cost = reported_cost(event.data.get("cost"))
            if cost is not None and cost.currency == "USD":
                self._reported = cost.amount
        if self.over is not None:
            return None
        self.over = self._why()
        return self.over

    def _count(self, usage: TokenUsage) -> None:
        self._usage = usage
        self._tokens = max(self._tokens, usage.total_tokens)
        if isinstance(usage.cost_usd, float):
            self._estimate = max(self._estimate or 0.0, usage.cost_usd)

    def _why(self) -> str | None:
        if self._max_tokens is not None and self._tokens > self._max_tokens:
            return f"{self._tokens} tokens, over the task's max_tokens {self._max_tokens}"
        cost = self._reported if self._reported is not None else self._estimate
        if self._max_usd is not None and cost is not None and cost > self._max_usd:
            return f"${cost:.4f}, over the task's max_cost_usd ${self._max_usd:g}"
        return None

    def error(self) -> TurnError:
        assert self.over is not None
        return TurnError(kind=KIND, message=f"stopped over budget: {self.over}")

    def ended(self, outcome: Outcome | None) -> Outcome:
        """The attempt's outcome, failed with kind ``budget``: the turn's own where it ended,
        else what the events showed before it was stopped."""
        if outcome is not None:
            return Spent(
                error=self.error(),
                answer=outcome.answer,
                files_changed=outcome.files_changed,
                usage=outcome.usage,
                session_id=outcome.session_id,
            )
        return Spent(
            error=self.error(),
            answer="".join(self._answer),
            files_changed=self._files,
            usage=self._usage,
            session_id=self._session,
        )
