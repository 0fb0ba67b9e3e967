"""Layer 4: the public API that composes transport, protocol and normalizer.

Its names are imported on first use (`gemwire._lazy`): ``gemwire replay`` needs only
`replay_gemini_stream`, not the process runner with anyio, the transport and the session
files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gemwire._lazy import lazy_exports

if TYPE_CHECKING:
    from gemwire.runners.discovery import (
        GeminiExecutable as GeminiExecutable,
        find_gemini as find_gemini,
    )
    from gemwire.runners.gemini import (
        GeminiOptions as GeminiOptions,
        GeminiRun as GeminiRun,
        ResumeToken as ResumeToken,
        RunResult as RunResult,
        parse_resume_line as parse_resume_line,
        run_gemini as run_gemini,
        run_gemini_sync as run_gemini_sync,
    )
    from gemwire.runners.provider import (
        GeminiCliProvider as GeminiCliProvider,
        ProviderResult as ProviderResult,
    )
    from gemwire.runners.replay import replay_gemini_stream as replay_gemini_stream

_LAZY_EXPORTS: dict[str, tuple[str, ...]] = {
    "gemwire.runners.discovery": ("GeminiExecutable", "find_gemini"),
    "gemwire.runners.gemini": (
        "GeminiOptions",
        "GeminiRun",
        "ResumeToken",
        "RunResult",
        "parse_resume_line",
        "run_gemini",
        "run_gemini_sync",
    ),
    "gemwire.runners.provider": ("GeminiCliProvider", "ProviderResult"),
    "gemwire.runners.replay": ("replay_gemini_stream",),
}
__getattr__, __dir__ = lazy_exports(globals(), _LAZY_EXPORTS)
__all__ = tuple(sorted(n for names in _LAZY_EXPORTS.values() for n in names))
