"""The budgets of a Gemini run (`GeminiOptions.max_model_turns`, ``max_tool_calls``,
``max_rate_limit_retries``): what they count, and when one is spent.

A model turn is seen when the model writes text or calls a tool after the previous turn's
tool results. A rate-limit retry is the CLI's ``Attempt N failed`` line on stderr naming a
429; the last one is kept until the model answers, to explain a run that ends while
retrying.
"""

from __future__ import annotations

import re

from gemwire.events import Event, MessageDelta, ToolCallFinished, ToolCallStarted
from gemwire.runners.gemini_options import GeminiOptions

__all__ = ("RunBudget", "is_retry_line")

_RETRY_LINE = re.compile(r"^Attempt (\d+) failed\b")
_RATE_LIMITED = ("429", "Resource has been exhausted", "RESOURCE_EXHAUSTED")


def is_retry_line(line: str) -> bool:
    """A line of the CLI's own retry loop (any failed attempt, not only 429s)."""
    return _RETRY_LINE.match(line) is not None


class RunBudget:
    """Counts one run against its options' budgets."""

    def __init__(self, options: GeminiOptions) -> None:
        self._options = options
        self._tool_calls = 0
        self._model_turns = 0
        self._in_model_turn = False
        self._rate_limit_retries = 0
        self.retrying: str | None = None
        """The last 429 retry line (shortened), until the model answers."""

    @property
    def counts_events(self) -> bool:
        """Whether an event can spend this budget (`spent_by` can say stop)."""
        return self._options.max_tool_calls is not None or self._options.max_model_turns is not None

    def spent_by(self, event: Event) -> str | None:
        """Why the run must stop (error kind ``cancelled``) now that ``event`` came."""
        options = self._options
        if isinstance(event, (MessageDelta, ToolCallStarted)):
            self.retrying = None  # the retries worked
            if not self._in_model_turn:
                self._in_model_turn = True
                self._model_turns += 1
                limit = options.max_model_turns
                if limit is not None and self._model_turns > limit:
                    return f"more than {limit} model turns (max_model_turns)"
        elif isinstance(event, ToolCallFinished):
            self._in_model_turn = False
        if isinstance(event, ToolCallStarted) and options.max_tool_calls is not None:
            self._tool_calls += 1
            if self._tool_calls > options.max_tool_calls:
                return f"more than {options.max_tool_calls} tool calls (max_tool_calls)"
        return None

    def spent_by_retry(self, line: str) -> str | None:
        """Why the run must stop (error kind ``rate_limited``) after this retry line."""
        if not any(marker in line for marker in _RATE_LIMITED):
            return None
        self.retrying = line.split(". Retrying", 1)[0][:200]
        self._rate_limit_retries += 1
        limit = self._options.max_rate_limit_retries
        if limit is not None and self._rate_limit_retries > limit:
            return f"rate limited; gave up after {limit} retries"
        return None
