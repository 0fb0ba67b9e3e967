"""gemwire: run Gemini CLI headlessly, and any ACP agent, as one typed, normalized event stream.

The package's layers are its folders (see DESIGN.md): ``wire`` (exact upstream types),
``protocol`` (sans-IO parsing), ``runners`` (the async API), ``sessions`` (saved sessions),
``testing`` (the offline test kit) and ``cli``.
"""

from __future__ import annotations

from gemwire._version import __version__
from gemwire.errors import (
    AgentNotFound,
    GeminiNotFound,
    GemwireError,
    MalformedMessageError,
    ProtocolError,
    ScenarioError,
)
from gemwire.runners import (
    GeminiExecutable,
    GeminiOptions,
    GeminiRun,
    ResumeToken,
    RunResult,
    find_gemini,
    parse_resume_line,
    replay_gemini_stream,
    run_gemini,
    run_gemini_sync,
)

__all__ = (
    "AgentNotFound",
    "GeminiExecutable",
    "GeminiNotFound",
    "GeminiOptions",
    "GeminiRun",
    "GemwireError",
    "MalformedMessageError",
    "ProtocolError",
    "ResumeToken",
    "RunResult",
    "ScenarioError",
    "__version__",
    "find_gemini",
    "parse_resume_line",
    "replay_gemini_stream",
    "run_gemini",
    "run_gemini_sync",
)
