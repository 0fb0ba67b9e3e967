"""A turn's steps as ACP ``session/update`` updates, and the turn's token usage. Sans-IO.

Text and thoughts are the model's steps addressed to the user (``target: TARGET_USER``), as
the SDK's own chunk stream has them; tool calls go through `ToolCalls`; after each model call
the conversation's usage grows, and the growth is one ``usage_update``. A step that failed
because a call was denied is the denial the client already saw (a failed tool call), not text;
another failure is the turn's error (`TurnUpdates.error`).

    >>> from gemwire.wire.antigravity import Step
    >>> turn = TurnUpdates(ToolCalls(), UsageMetadata())
    >>> step = Step(source="MODEL", target="TARGET_USER", status="ACTIVE", content_delta="Hi")
    >>> [u["sessionUpdate"] for u in turn.step(step, UsageMetadata(total_token_count=7))]
    ['agent_message_chunk', 'usage_update']
"""

from __future__ import annotations

from typing import Any

import msgspec

from gemwire.antigravity.settings import CONTEXT_WINDOW
from gemwire.antigravity.tool_calls import ToolCalls
from gemwire.wire import acp
from gemwire.wire.antigravity import Step, UsageMetadata

__all__ = ("TurnUpdates", "history_updates")


def _chunk(kind: str, text: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def _count(value: int | None) -> int:
    return value or 0


class TurnUpdates:
    """One turn's updates, from the conversation's usage when it started."""

    def __init__(self, calls: ToolCalls, usage: UsageMetadata) -> None:
        self._calls = calls
        self._start = usage
        self._last = usage
        self._denials = 0
        self.error: str | None = None
        """Why the turn failed, if its last failed step was not a denial."""

    def denied(self) -> None:
        """A call was just denied: the step that says so is expected."""
        self._denials += 1

    def step(self, step: Step, usage: UsageMetadata) -> list[dict[str, Any]]:
        updates: list[dict[str, Any]] = []
        if step.status == "ERROR" and step.type != "TOOL_CALL":
            if self._denials:
                self._denials -= 1
            else:
                self.error = step.error or step.content or "the turn failed"
        elif step.source == "MODEL" and step.target == "TARGET_USER":
            self.error = None
            if step.thinking_delta:
                updates.append(_chunk("agent_thought_chunk", step.thinking_delta))
            if step.content_delta:
                updates.append(_chunk("agent_message_chunk", step.content_delta))
        updates += self._calls.step(step)
        return updates + self.finish(usage)

    def finish(self, usage: UsageMetadata) -> list[dict[str, Any]]:
        """The ``usage_update`` for tokens not yet reported: after a step, and at the end
        of the turn (the harness reports a model call's tokens after its last step)."""
        if usage == self._last:
            return []
        used = _count(usage.total_token_count) - _count(self._last.total_token_count)
        self._last = usage
        update = acp.UsageUpdate(used=used, size=CONTEXT_WINDOW)
        return [{"sessionUpdate": "usage_update", **msgspec.to_builtins(update)}]

    def usage(self) -> acp.Usage | None:
        """The turn's tokens (``PromptResponse.usage``); ``None`` if no model call reported."""
        if self._last == self._start:
            return None
        start, end = self._start, self._last
        output = _count(end.candidates_token_count) - _count(start.candidates_token_count)
        thoughts = _count(end.thoughts_token_count) - _count(start.thoughts_token_count)
        cached = _count(end.cached_content_token_count) - _count(start.cached_content_token_count)
        return acp.Usage(
            total_tokens=_count(end.total_token_count) - _count(start.total_token_count),
            input_tokens=_count(end.prompt_token_count) - _count(start.prompt_token_count),
            output_tokens=output,
            thought_tokens=thoughts,
            cached_read_tokens=cached,
        )


def history_updates(steps: list[Step]) -> list[dict[str, Any]]:
    """A saved conversation replayed (``session/load``): prompts, answers, thoughts, calls.

    Each step is sent many times as it changes; the replay uses its last frame only.
    """
    last: dict[str, Step] = {}
    for step in steps:
        last[step.id or str(step.step_index)] = step
    calls = ToolCalls()
    updates: list[dict[str, Any]] = []
    for step in last.values():
        if step.source == "USER" and step.content:
            updates.append(_chunk("user_message_chunk", step.content))
        elif step.source == "MODEL" and step.target == "TARGET_USER" and step.status != "ERROR":
            if step.thinking:
                updates.append(_chunk("agent_thought_chunk", step.thinking))
            if step.content:
                updates.append(_chunk("agent_message_chunk", step.content))
        updates += calls.step(step)
    return updates
