"""Layer 4: the public API that composes transport, protocol and normalizer."""

from __future__ import annotations

from gemwire.runners.replay import replay_gemini_stream

__all__ = ("replay_gemini_stream",)
