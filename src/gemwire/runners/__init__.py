"""Layer 4: the public API that composes transport, protocol and normalizer."""

from __future__ import annotations

from gemwire.runners.discovery import GeminiExecutable, find_gemini
from gemwire.runners.gemini import (
    GeminiOptions,
    GeminiRun,
    ResumeToken,
    RunResult,
    parse_resume_line,
    run_gemini,
    run_gemini_sync,
)
from gemwire.runners.provider import GeminiCliProvider, ProviderResult
from gemwire.runners.replay import replay_gemini_stream

__all__ = (
    "GeminiCliProvider",
    "GeminiExecutable",
    "GeminiOptions",
    "GeminiRun",
    "ProviderResult",
    "ResumeToken",
    "RunResult",
    "find_gemini",
    "parse_resume_line",
    "replay_gemini_stream",
    "run_gemini",
    "run_gemini_sync",
)
