"""Gemini CLI over ``stream-json`` as a server agent: ``gemini-stream``.

No process runs between turns: each prompt is one ``gemini -p`` run (`run_gemini`),
resumed with the session id the CLI gave on the first (``--resume``). Gemini CLI asks no
permission in this mode: the session's preset picks its approval mode instead
(`APPROVAL_MODES`), and a tool the mode does not allow is refused by the CLI.

    >>> gemini_options("/w", {"PATH": "/bin", "GEMWIRE_TOKEN": "t"}, resume="abc",
    ...                permissions="edits", model=None).approval_mode
    'auto_edit'
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Protocol

import msgspec

from gemwire.errors import AgentNotFound, UnsupportedVersion
from gemwire.events import Event
from gemwire.runners.agents import resolve_agent
from gemwire.runners.discovery import find_gemini
from gemwire.runners.gemini import GeminiOptions, run_gemini
from gemwire.runners.gemini_options import ApprovalMode
from gemwire.server.responses import NotFound

__all__ = (
    "APPROVAL_MODES",
    "GEMINI_STREAM",
    "GeminiStreamLauncher",
    "StreamLauncher",
    "StreamRun",
    "gemini_options",
)

GEMINI_STREAM = "gemini-stream"

APPROVAL_MODES: dict[str, ApprovalMode] = {
    "ask": "default",
    "deny": "default",
    "reads": "default",
    "edits": "auto_edit",
    "all": "yolo",
}
"""The approval mode of each permission preset (there is no one to ask in this mode)."""

_TOKEN_VARIABLE = "GEMWIRE_TOKEN"


class StreamRun(Protocol):
    """One run: its events up to one ``turn_completed``; `cancel` ends it early."""

    def __aiter__(self) -> AsyncIterator[Event]: ...

    async def cancel(self, message: str = ...) -> None: ...


class StreamLauncher(Protocol):
    """Runs ``gemini-stream`` turns (the seam: tests give one that starts no process)."""

    def check(self) -> None:
        """`NotFound` when the Gemini CLI cannot be run here."""
        ...

    def run(
        self, prompt: str, cwd: str, *, resume: str | None, permissions: str, model: str | None
    ) -> AbstractAsyncContextManager[StreamRun]:
        """One run of ``prompt`` in ``cwd``, resuming the CLI's session ``resume``."""
        ...


def gemini_options(
    cwd: str,
    environ: Mapping[str, str],
    *,
    resume: str | None,
    permissions: str,
    model: str | None,
) -> GeminiOptions:
    """The options of one run: the server's environment without its token."""
    env = {k: v for k, v in environ.items() if k != _TOKEN_VARIABLE}
    return GeminiOptions(
        cwd=cwd,
        env=env,
        inherit_env=False,
        resume=resume,
        approval_mode=APPROVAL_MODES[permissions],
        model=model,
    )


class GeminiStreamLauncher:
    """Runs the Gemini CLI that the ``gemini`` agent is (`resolve_agent`: the same
    places, the pinned install of a checkout included)."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = dict(os.environ if environ is None else environ)
        self._executable: str | None = None
        self._checked = False

    def check(self) -> None:
        try:
            command = resolve_agent("gemini", environ=self._environ).command
            # The launcher itself; a configured command of another shape: Gemini's own search.
            executable = command[0] if command[1:] == ("--acp",) else None
            find_gemini(executable)
        except (AgentNotFound, UnsupportedVersion) as exc:
            raise NotFound(f"{GEMINI_STREAM}: {exc}") from exc
        self._executable, self._checked = executable, True

    def run(
        self, prompt: str, cwd: str, *, resume: str | None, permissions: str, model: str | None
    ) -> AbstractAsyncContextManager[StreamRun]:
        if not self._checked:  # a session from before a restart
            self.check()
        options = gemini_options(
            cwd, self._environ, resume=resume, permissions=permissions, model=model
        )
        return run_gemini(prompt, msgspec.structs.replace(options, executable=self._executable))
