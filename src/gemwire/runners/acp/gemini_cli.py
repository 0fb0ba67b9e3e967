"""What is particular to Gemini CLI's ACP agent (``gemini --acp``), in one place.

Chosen only for an agent that calls itself ``gemini-cli`` in ``initialize`` (or, when it
gives no name, is started as the built-in ``gemini``): `quirks.quirks_for`.

- **One ``session/new`` / ``session/load`` at a time.** Gemini CLI registers each new
  session's folder in its project registry under a file lock taken with exponential
  backoff: 6 concurrent ``session/new`` on one ``gemini --acp`` (0.61.0) took 0.1, 0.2,
  0.4 ... 3.3 s, and 20 never finished; issued one at a time, 20 sessions were ready in
  1.2 s.
- **The stub of a loaded session.** Gemini CLI writes a stub for a session it loads,
  which its next start's cleanup deletes together with the session (docs/running.md,
  "Resuming"): the client removes it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Mapping

import anyio

from gemwire.sessions import remove_resume_stubs

__all__ = ("GEMINI_CLI_AGENT", "GeminiCliQuirks")

GEMINI_CLI_AGENT = "gemini-cli"
"""The ``agentInfo.name`` Gemini CLI gives in ``initialize``."""


class GeminiCliQuirks:
    """The workarounds above, for one ``gemini-cli`` agent process."""

    def __init__(self) -> None:
        self._session_lock = anyio.Lock()

    @contextlib.asynccontextmanager
    async def opening_session(self) -> AsyncIterator[None]:
        """Held around ``session/new`` and ``session/load``."""
        async with self._session_lock:
            yield

    async def protect_loaded_session(
        self, environment: Mapping[str, str], folder: str, session_id: str
    ) -> str | None:
        """Remove the stub of a loaded session; a warning to report if that failed."""
        home = environment.get("GEMINI_CLI_HOME")

        def remove() -> None:
            remove_resume_stubs(home or os.path.expanduser("~"), folder, session_id)

        try:
            await anyio.to_thread.run_sync(remove)
        except OSError as exc:
            return (
                f"could not remove the stub file of loaded session {session_id} ({exc}); "
                "Gemini's session cleanup may delete the session at its next start"
            )
        return None
