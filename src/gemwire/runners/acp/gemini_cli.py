"""What is particular to Gemini CLI's ACP agent (``gemini --acp``), in one place.

Chosen only for an agent that calls itself ``gemini-cli`` in ``initialize`` (or, when it
gives no name, is started as the built-in ``gemini``): `quirks.quirks_for`.

- **One ``session/new`` / ``session/load`` at a time.** Gemini CLI registers each new
  session's folder in its project registry under a file lock taken with exponential
  backoff: 6 concurrent ``session/new`` on one ``gemini --acp`` (0.61.0) took 0.1, 0.2,
  0.4 ... 3.3 s, and 20 never finished; issued one at a time, 20 sessions were ready in
  1.2 s.
- **No load within the minute the session's file was named for.** Gemini CLI 0.61.0
  names a session's file ``session-<UTC minute>-<first 8 of the id>.jsonl``, and
  ``session/load`` starts a recording of the loaded id *before* it reads the session
  (``Config.initialize`` → ``GeminiClient.startChat``): a new file named for the current
  minute, opened with a header and ``{"$set": {"messages": [<its context message>]}}``.
  Within the minute the session's own file was named for, that is the same name: the
  records are appended to the session's own file, and the ``$set`` replaces its whole
  history with one context message. The session is then no longer resumable, the load
  fails ("Invalid session identifier", or "No previous sessions found for this
  project"), and every later resume too. The client waits for the next minute first
  (with a notice), then loads.
- **Its replay comes after its answer to ``session/load``** (it does not wait for
  ``streamHistory``): the client waits until the replay has been quiet for
  `REPLAY_SETTLE` seconds (at most `REPLAY_SETTLE_MAX`), so that a prompt sent next does
  not interleave with history. Agents that follow the schema send it before answering.
- **The stub of a loaded session.** In a later minute, that recording is a stub file of
  its own, which Gemini's next start's cleanup deletes together with the session
  (docs/running.md, "Resuming"): the client removes it.
- **A session it cannot find** is "Internal error" with details that point at
  ``gemini --list-sessions``: the client says which session, where, and how to list them.
"""

from __future__ import annotations

import contextlib
import datetime
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping

import anyio

from gemwire.errors import AgentRequestFailed
from gemwire.sessions import GeminiHome, remove_resume_stubs

__all__ = (
    "GEMINI_CLI_AGENT",
    "REPLAY_SETTLE",
    "REPLAY_SETTLE_MAX",
    "GeminiCliQuirks",
    "recording_name",
)

GEMINI_CLI_AGENT = "gemini-cli"
"""The ``agentInfo.name`` Gemini CLI gives in ``initialize``."""

REPLAY_SETTLE = 0.25
"""Seconds without a replayed update after which a loaded session's history is taken as
complete (at most `REPLAY_SETTLE_MAX`)."""

REPLAY_SETTLE_MAX = 5.0

_MINUTE_MARGIN = 0.05
"""Seconds past the minute's end before loading: Gemini reads the same clock a moment later."""

_NOT_FOUND = ("Invalid session identifier", "No previous sessions found")
"""How Gemini CLI 0.61.0 says (in the error's ``data.details``) it has no such session."""

_RESOURCE_NOT_FOUND = -32002


def _utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def recording_name(session_id: str, now: datetime.datetime) -> str:
    """The file Gemini CLI 0.61.0 records ``session_id`` in when it starts at ``now``
    (``chatRecordingService``: the ISO time cut to the minute, ``:`` as ``-``).

    >>> recording_name("03ad43d8-ba5e-40f1", datetime.datetime(2026, 11, 27, 22, 31, 59))
    'session-2026-11-27T22-31-03ad43d8.jsonl'
    """
    return f"session-{now:%Y-%m-%dT%H-%M}-{session_id[:8]}.jsonl"


class GeminiCliQuirks:
    """The workarounds above, for one ``gemini-cli`` agent process. ``now`` (UTC) and
    ``sleep`` are the clock's seams."""

    def __init__(
        self,
        *,
        now: Callable[[], datetime.datetime] = _utc_now,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    ) -> None:
        self._session_lock = anyio.Lock()
        self._now = now
        self._sleep = sleep

    @contextlib.asynccontextmanager
    async def opening_session(self) -> AsyncIterator[None]:
        """Held around ``session/new`` and ``session/load``."""
        async with self._session_lock:
            yield

    async def before_load(
        self,
        environment: Mapping[str, str],
        folder: str,
        session_id: str,
        notify: Callable[[str], None],
    ) -> None:
        """Wait until the minute the session's file is named for has passed (saying so
        first), so that the load's recording is a file of its own."""
        home = _home(environment)
        told = False
        while True:
            now = self._now()
            name = recording_name(session_id, now)

            def named_now(name: str = name) -> bool:
                files = GeminiHome(home).files_of(session_id, folder)
                return any(os.path.basename(f.path) == name for f in files)

            if not await anyio.to_thread.run_sync(named_now):
                return
            wait = 60 - now.second - now.microsecond / 1e6 + _MINUTE_MARGIN
            if not told:
                notify(
                    f"waiting {wait:.0f} s to load session {session_id}: Gemini CLI would "
                    f"record the load in the session's own file ({name}, named for this "
                    "minute) and reset its history"
                )
                told = True
            await self._sleep(wait)

    def load_failed(
        self, error: AgentRequestFailed, folder: str, session_id: str
    ) -> AgentRequestFailed:
        """Gemini's "no such session" said for gemwire's users (its own words point at
        ``gemini --list-sessions`` and ``--resume {number}``); other errors as they are."""
        details = error.data.get("details") if isinstance(error.data, dict) else None
        if not isinstance(details, str) or not details.startswith(_NOT_FOUND):
            return error
        return AgentRequestFailed(
            f"Gemini CLI has no session {session_id} for {folder} "
            f"(`gemwire sessions list --project {folder}` lists those it has)",
            method=error.method,
            code=_RESOURCE_NOT_FOUND,
        )

    async def settle_replay(self, updates: Callable[[], int]) -> None:
        """After ``session/load`` answered: until ``updates()`` (the session's updates
        so far) has not changed for `REPLAY_SETTLE` seconds, at most `REPLAY_SETTLE_MAX`."""
        with anyio.move_on_after(REPLAY_SETTLE_MAX):
            while True:
                seen = updates()
                await self._sleep(REPLAY_SETTLE)
                if updates() == seen:
                    return

    async def protect_loaded_session(
        self, environment: Mapping[str, str], folder: str, session_id: str
    ) -> str | None:
        """Remove the stub of a loaded session; a warning to report if that failed."""
        home = _home(environment)

        def remove() -> None:
            remove_resume_stubs(home, folder, session_id)

        try:
            await anyio.to_thread.run_sync(remove)
        except OSError as exc:
            return (
                f"could not remove the stub file of loaded session {session_id} ({exc}); "
                "Gemini's session cleanup may delete the session at its next start"
            )
        return None


def _home(environment: Mapping[str, str]) -> str:
    """The folder holding the agent's ``.gemini``, as Gemini CLI finds it."""
    return environment.get("GEMINI_CLI_HOME") or os.path.expanduser("~")
