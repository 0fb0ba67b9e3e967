"""gemwire: run Gemini CLI headlessly, and any ACP agent, as one typed, normalized event stream.

    async with gemwire.run_gemini("fix the failing test") as run:
        async for event in run:          # gemwire.events: one vocabulary for every source
            print(event.type)
    run.result.raise_for_error()

The package's layers are its folders (see DESIGN.md): ``wire`` (exact upstream types),
``protocol`` (sans-IO parsing), ``runners`` (the async API), ``sessions`` (saved sessions),
``testing`` (the offline test kit) and ``cli``.
"""

from __future__ import annotations

from gemwire._version import __version__
from gemwire.errors import (
    AgentCrashed,
    AgentFailed,
    AgentNotFound,
    AgentProtocolViolated,
    AgentRequestFailed,
    ApiFailed,
    AuthFailed,
    ConfigInvalid,
    GeminiNotFound,
    GemwireError,
    InvalidInput,
    MalformedMessageError,
    PromptTooLarge,
    ProtocolError,
    QuotaExhausted,
    RateLimited,
    RunCancelled,
    RunFailed,
    RunTimedOut,
    ScenarioError,
    TurnLimitReached,
    UnsupportedVersion,
    UntrustedWorkspace,
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
from gemwire.runners.acp import AcpClient, AcpOptions, AcpTurnResult, run_acp

__all__ = (
    "AcpClient",
    "AcpOptions",
    "AcpTurnResult",
    "AgentCrashed",
    "AgentFailed",
    "AgentNotFound",
    "AgentProtocolViolated",
    "AgentRequestFailed",
    "ApiFailed",
    "AuthFailed",
    "ConfigInvalid",
    "GeminiExecutable",
    "GeminiNotFound",
    "GeminiOptions",
    "GeminiRun",
    "GemwireError",
    "InvalidInput",
    "MalformedMessageError",
    "PromptTooLarge",
    "ProtocolError",
    "QuotaExhausted",
    "RateLimited",
    "ResumeToken",
    "RunCancelled",
    "RunFailed",
    "RunResult",
    "RunTimedOut",
    "ScenarioError",
    "TurnLimitReached",
    "UnsupportedVersion",
    "UntrustedWorkspace",
    "__version__",
    "find_gemini",
    "parse_resume_line",
    "replay_gemini_stream",
    "run_acp",
    "run_gemini",
    "run_gemini_sync",
)
