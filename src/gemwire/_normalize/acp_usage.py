"""The token usage of an ACP ``session/prompt`` result (the standard ``usage``, else
Gemini CLI's ``_meta.quota``), and what the agent's ``usage_update``s add to it."""

from __future__ import annotations

import re

import msgspec
from msgspec import UNSET, UnsetType

from gemwire.events import AgentCost, ModelUsage, TokenUsage
from gemwire.wire import acp, gemini_acp

__all__ = ("ReportedUsage", "model_usage", "prompt_usage")


def prompt_usage(response: acp.PromptResponse) -> TokenUsage | None:
    if response.usage is not None:
        u = response.usage
        return TokenUsage(
            input_tokens=u.input_tokens,
            output_tokens=u.output_tokens,
            cached_tokens=u.cached_read_tokens,
            total_tokens=u.total_tokens,
        )
    quota = response.meta.get("quota") if isinstance(response.meta, dict) else None
    if not isinstance(quota, dict):
        return None
    try:  # Gemini CLI's _meta.quota (docs/gemini-cli.md#usage-and-errors-of-a-prompt)
        return _quota_usage(msgspec.convert(quota, gemini_acp.Quota))
    except msgspec.ValidationError:
        return None


def model_usage(usage: TokenUsage) -> ModelUsage:
    """The same counts, as one model's."""
    return ModelUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_tokens=usage.cached_tokens,
        total_tokens=usage.total_tokens,
    )


def _quota_usage(quota: gemini_acp.Quota) -> TokenUsage:
    by_model: dict[str, tuple[int, int]] = {}
    for entry in quota.model_usage:
        inp, out = by_model.get(entry.model, (0, 0))
        by_model[entry.model] = (
            inp + entry.token_count.input_tokens,
            out + entry.token_count.output_tokens,
        )
    total = quota.token_count
    return TokenUsage(
        input_tokens=total.input_tokens,
        output_tokens=total.output_tokens,
        total_tokens=total.input_tokens + total.output_tokens,
        by_model={
            model: ModelUsage(input_tokens=i, output_tokens=o, total_tokens=i + o)
            for model, (i, o) in by_model.items()
        },
    )


_EFFORT = re.compile(r"\[[^\[\]]*\]$")


class ReportedUsage:
    """What a session's ``usage_update``s said (context use, cost so far, the model), turn by
    turn: the agent's own figures, beside gemwire's estimates.

    ``session_total`` is the cost the agent last reported; a turn's own cost is its rise over
    the turn, known once an earlier figure is (the session was opened new on this
    connection: nothing spent before; or an earlier turn reported one).
    """

    __slots__ = ("_before", "_cost", "_model", "_size", "_used")

    def __init__(self) -> None:
        self._before: float | None = None
        self._cost: acp.Cost | None = None
        self._model: str | None = None
        self._used: int | None = None
        self._size: int | None = None

    def opened_new(self) -> None:
        """The session was created on this connection: it had cost nothing before."""
        self._before = 0.0

    def feed(self, update: acp.UsageUpdate) -> None:
        self._used, self._size = update.used, update.size
        if update.cost is not None:
            self._cost = update.cost
        # Claude's adapter names the model the usage belongs to in _meta (ACP's usage_update
        # has no model field).
        model = update.meta.get("_claude/model") if isinstance(update.meta, dict) else None
        if isinstance(model, str) and model:
            self._model = model

    def finish(
        self, usage: TokenUsage | None, model: str | None
    ) -> tuple[TokenUsage | None, AgentCost | UnsetType]:
        """The turn's usage with the context figures and its model, and the agent's cost;
        then the next turn starts from what was reported in this one."""
        model = self._model or model
        if model:  # Codex names its model "gpt-5.5[medium]": the model and its effort
            model = _EFFORT.sub("", model)
        if usage is not None:
            fields: dict[str, object] = {}
            if not usage.by_model and model:
                fields["by_model"] = {model: model_usage(usage)}
            if self._used is not None and self._size is not None:
                fields["context_tokens"], fields["context_window"] = self._used, self._size
            usage = msgspec.structs.replace(usage, **fields) if fields else usage
        cost: AgentCost | UnsetType = UNSET
        if self._cost is not None:
            total = self._cost.amount
            before = self._before
            cost = AgentCost(
                currency=self._cost.currency,
                session_total=total,
                turn=None if before is None else round(total - before, 10),
            )
            self._before = total
        self._cost, self._model, self._used, self._size = None, None, None, None
        return usage, cost
