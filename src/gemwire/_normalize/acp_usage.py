"""The token usage of an ACP ``session/prompt`` result: the standard ``usage``, else
Gemini CLI's ``_meta.quota``."""

from __future__ import annotations

import msgspec

from gemwire.events import ModelUsage, TokenUsage
from gemwire.wire import acp, gemini_acp

__all__ = ("prompt_usage",)


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
