"""Layer 4: the public API that composes transport, protocol and normalizer."""

from __future__ import annotations

from gemwire._normalize.gemini_replay import replay_gemini_stream
from gemwire.runners.discovery import GeminiExecutable, find_gemini
from gemwire.runners.gemini import GeminiRun, run_gemini, run_gemini_sync
from gemwire.runners.gemini_options import GeminiOptions
from gemwire.runners.gemini_result import ResumeToken, RunResult, parse_resume_line

__all__ = (
    "GeminiExecutable",
    "GeminiOptions",
    "GeminiRun",
    "ResumeToken",
    "RunResult",
    "find_gemini",
    "parse_resume_line",
    "replay_gemini_stream",
    "run_gemini",
    "run_gemini_sync",
)
