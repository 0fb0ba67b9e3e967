"""gemwire: run Gemini CLI headlessly, and any ACP agent, as one typed, normalized event stream.

    async with gemwire.run_gemini("fix the failing test") as run:
        async for event in run:          # gemwire.events: one vocabulary for every source
            print(event.type)
    run.result.raise_for_error()

The package's layers are its folders (docs/architecture.md): ``wire`` (exact upstream
types), ``protocol`` (sans-IO parsing), ``_normalize`` (the reducers), ``_transport``
(processes), ``runners`` (the async API), ``sessions`` (saved sessions), ``batch``,
``adapters``, ``checks`` (what a run here needs), ``testing`` (the offline test kit) and
``cli``.
"""

from __future__ import annotations as annotations

from typing import TYPE_CHECKING

from gemwire import errors as _errors
from gemwire._lazy import lazy_exports
from gemwire._version import __version__ as __version__

# The whole exception tree, as errors.__all__ lists it (RUN_FAILURES is not exported here).
from gemwire.errors import *

if TYPE_CHECKING:
    from gemwire._normalize.gemini_replay import replay_gemini_stream as replay_gemini_stream
    from gemwire.checks import (
        Check as Check,
        check_agents as check_agents,
        check_gemini_environment as check_gemini_environment,
    )
    from gemwire.events import Event as Event
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
    from gemwire.runners.discovery import (
        GeminiExecutable as GeminiExecutable,
        find_gemini as find_gemini,
    )
    from gemwire.runners.gemini import (
        GeminiRun as GeminiRun,
        run_gemini as run_gemini,
        run_gemini_sync as run_gemini_sync,
    )
    from gemwire.runners.gemini_options import GeminiOptions as GeminiOptions
    from gemwire.runners.gemini_result import (
        ResumeToken as ResumeToken,
        RunResult as RunResult,
        parse_resume_line as parse_resume_line,
    )
    from gemwire.runners.turn_result import TurnResult as TurnResult
    from gemwire.sessions import (
        Conversation as Conversation,
        GeminiHome as GeminiHome,
        SessionInfo as SessionInfo,
        load_session as load_session,
    )

# The one list of what `gemwire` exports lazily, by module (tests/integration/test_exports.py
# checks the TYPE_CHECKING imports above against it). The runners pull in anyio and the
# whole protocol stack (~100 ms); `import gemwire` (and so `gemwire --help`) does not pay
# for them until one is used.
_LAZY_EXPORTS: dict[str, tuple[str, ...]] = {
    "gemwire.events": ("Event",),
    "gemwire.checks": ("Check", "check_agents", "check_gemini_environment"),
    # Each name from the module that defines it: `gemwire replay` does not load the runners.
    "gemwire._normalize.gemini_replay": ("replay_gemini_stream",),
    "gemwire.runners.discovery": ("GeminiExecutable", "find_gemini"),
    "gemwire.runners.gemini": ("GeminiRun", "run_gemini", "run_gemini_sync"),
    "gemwire.runners.gemini_options": ("GeminiOptions",),
    "gemwire.runners.gemini_result": ("ResumeToken", "RunResult", "parse_resume_line"),
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
_ERRORS = tuple(name for name in _errors.__all__ if name != "RUN_FAILURES")


__getattr__, __dir__ = lazy_exports(globals(), _LAZY_EXPORTS)
__all__ = tuple(
    sorted((*_ERRORS, *(n for names in _LAZY_EXPORTS.values() for n in names), "__version__"))
)
