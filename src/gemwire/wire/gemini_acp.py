"""Gemini CLI's extension of ACP: the ``_meta.quota`` of its ``session/prompt`` result.

Pinned to Gemini CLI 0.61.0 (docs/gemini-cli.md#usage-and-errors-of-a-prompt); the object
carries no type names upstream, so these are named after its keys. Per model turn the counts
are the last ``usageMetadata`` of that turn, summed across turns; slash commands send zeros
and an empty ``model_usage``.

    {"stopReason": "end_turn", "_meta": {"quota": {
        "token_count": {"input_tokens": 250, "output_tokens": 25},
        "model_usage": [{"model": "gemini-3.8-flash",
                         "token_count": {"input_tokens": 100, "output_tokens": 20}}]}}}
"""

from __future__ import annotations

import msgspec

__all__ = ("UPSTREAM_VERSION", "ModelUsage", "Quota", "TokenCount")

UPSTREAM_VERSION = "0.61.0"


class TokenCount(msgspec.Struct, frozen=True):
    input_tokens: int = 0
    output_tokens: int = 0


class ModelUsage(msgspec.Struct, frozen=True):
    """One entry of ``model_usage``: a later turn of a prompt is attributed to the
    configured model (``auto``), not the one that answered."""

    model: str
    token_count: TokenCount = TokenCount()


class Quota(msgspec.Struct, frozen=True):
    """``_meta.quota`` of a ``session/prompt`` result."""

    token_count: TokenCount = TokenCount()
    model_usage: list[ModelUsage] = []
