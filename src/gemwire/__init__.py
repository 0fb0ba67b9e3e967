"""gemwire: run Gemini CLI headlessly, and any ACP agent, as one typed, normalized event stream.

    async with gemwire.run_gemini("fix the failing test") as run:
        async for event in run:          # gemwire.events: one vocabulary for every source
            print(event.type)
    run.result.raise_for_error()

The package's layers are its folders (see DESIGN.md): ``wire`` (exact upstream types),
``protocol`` (sans-IO parsing), ``runners`` (the async API), ``sessions`` (saved sessions),
``testing`` (the offline test kit) and ``cli``.
"""

from __future__ import annotations as annotations

from typing import TYPE_CHECKING

from gemwire._lazy import lazy_exports
from gemwire._version import __version__ as __version__
from gemwire.errors import (
    AccessDenied as AccessDenied,
    AccountIneligible as AccountIneligible,
    AgentCrashed as AgentCrashed,
    AgentFailed as AgentFailed,
    AgentNotFound as AgentNotFound,
    AgentProtocolViolated as AgentProtocolViolated,
    AgentRequestFailed as AgentRequestFailed,
    ApiFailed as ApiFailed,
    AuthFailed as AuthFailed,
    ConfigInvalid as ConfigInvalid,
    GeminiNotFound as GeminiNotFound,
    GemwireError as GemwireError,
    InvalidInput as InvalidInput,
    InvalidOptions as InvalidOptions,
    InvalidTasks as InvalidTasks,
    LockFolderUnsafe as LockFolderUnsafe,
    MalformedMessageError as MalformedMessageError,
    PromptTooLarge as PromptTooLarge,
    ProtocolError as ProtocolError,
    QuotaExhausted as QuotaExhausted,
    RateLimited as RateLimited,
    RunCancelled as RunCancelled,
    RunFailed as RunFailed,
    RunTimedOut as RunTimedOut,
    ScenarioError as ScenarioError,
    SessionError as SessionError,
    SessionNotFound as SessionNotFound,
    TurnLimitReached as TurnLimitReached,
    UnsupportedVersion as UnsupportedVersion,
    UntrustedWorkspace as UntrustedWorkspace,
)

if TYPE_CHECKING:
    from gemwire.events import Event as Event
    from gemwire.runners import (
        GeminiExecutable as GeminiExecutable,
        GeminiOptions as GeminiOptions,
        GeminiRun as GeminiRun,
        ResumeToken as ResumeToken,
        RunResult as RunResult,
        find_gemini as find_gemini,
        parse_resume_line as parse_resume_line,
        replay_gemini_stream as replay_gemini_stream,
        run_gemini as run_gemini,
        run_gemini_sync as run_gemini_sync,
    )
    from gemwire.runners.acp import (
        AcpClient as AcpClient,
        AcpOptions as AcpOptions,
        AcpSession as AcpSession,
        AcpTurn as AcpTurn,
        AcpTurnResult as AcpTurnResult,
        PermissionRequest as PermissionRequest,
        TerminalRequest as TerminalRequest,
        run_acp as run_acp,
        run_acp_sync as run_acp_sync,
    )
    from gemwire.runners.turn_result import TurnResult as TurnResult
    from gemwire.sessions import (
        Conversation as Conversation,
        GeminiHome as GeminiHome,
        SessionInfo as SessionInfo,
        load_session as load_session,
    )

# The one list of what `gemwire` exports lazily, by module (tests/unit/test_exports.py
# checks the TYPE_CHECKING imports above against it). The runners pull in anyio and the
# whole protocol stack (~100 ms); `import gemwire` (and so `gemwire --help`) does not pay
# for them until one is used.
_LAZY_EXPORTS: dict[str, tuple[str, ...]] = {
    "gemwire.events": ("Event",),
    "gemwire.runners": (
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
    "gemwire.runners.acp": (
        "AcpClient",
        "AcpOptions",
        "AcpSession",
        "AcpTurn",
        "AcpTurnResult",
        "PermissionRequest",
        "TerminalRequest",
        "run_acp",
        "run_acp_sync",
    ),
    "gemwire.runners.turn_result": ("TurnResult",),
    "gemwire.sessions": ("Conversation", "GeminiHome", "SessionInfo", "load_session"),
}
_ERRORS = (
    "AccessDenied",
    "AccountIneligible",
    "AgentCrashed",
    "AgentFailed",
    "AgentNotFound",
    "AgentProtocolViolated",
    "AgentRequestFailed",
    "ApiFailed",
    "AuthFailed",
    "ConfigInvalid",
    "GeminiNotFound",
    "GemwireError",
    "InvalidInput",
    "InvalidOptions",
    "InvalidTasks",
    "LockFolderUnsafe",
    "MalformedMessageError",
    "PromptTooLarge",
    "ProtocolError",
    "QuotaExhausted",
    "RateLimited",
    "RunCancelled",
    "RunFailed",
    "RunTimedOut",
    "ScenarioError",
    "SessionError",
    "SessionNotFound",
    "TurnLimitReached",
    "UnsupportedVersion",
    "UntrustedWorkspace",
)


__getattr__, __dir__ = lazy_exports(globals(), _LAZY_EXPORTS)
__all__ = tuple(
    sorted((*_ERRORS, *(n for names in _LAZY_EXPORTS.values() for n in names), "__version__"))
)
