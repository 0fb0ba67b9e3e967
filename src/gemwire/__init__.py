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

import importlib
from typing import TYPE_CHECKING, Any

from gemwire._version import __version__
from gemwire.errors import (
    AccessDenied,
    AccountIneligible,
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
    InvalidOptions,
    LockFolderUnsafe,
    MalformedMessageError,
    PromptTooLarge,
    ProtocolError,
    QuotaExhausted,
    RateLimited,
    RunCancelled,
    RunFailed,
    RunTimedOut,
    ScenarioError,
    SessionError,
    SessionNotFound,
    TurnLimitReached,
    UnsupportedVersion,
    UntrustedWorkspace,
)

if TYPE_CHECKING:
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

# The runners pull in anyio and the whole protocol stack (~100 ms); `import gemwire` (and so
# `gemwire --help`) does not pay for them until one is used.
_LAZY = {
    **dict.fromkeys(
        (
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
        ),
        "gemwire.runners",
    ),
    **dict.fromkeys(("AcpClient", "AcpOptions", "AcpTurnResult", "run_acp"), "gemwire.runners.acp"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'gemwire' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


__all__ = (
    "AccessDenied",
    "AccountIneligible",
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
    "InvalidOptions",
    "LockFolderUnsafe",
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
    "SessionError",
    "SessionNotFound",
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
