"""One Gemini CLI starting at a time on a Gemini home, until a start there got through.

Gemini CLI rewrites the home's ``settings.json`` when it starts and finds keys its version
renamed (0.61.0 renames 0.15's ``general.disableAutoUpdate``), and it writes the file in
place: a CLI starting at that moment on the same home reads an empty file and exits 52.
Many runs on one home is a normal setup, so the runner serializes starts per home: a run
holds a lock (a `SessionLock` on the home) until its CLI prints something — by then it has
read and rewritten its settings — or exits, and the other runs wait for it at most
`FIRST_START_BOUND` seconds (a CLI that prints nothing until the end, ``-o json``, holds
them up no longer). Once a start on a home got through, later runs in this process skip
the lock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio

from gemwire._transport.process import Child
from gemwire.runners.session_lock import SessionLock

__all__ = ("FIRST_START_BOUND", "spawn_first_start")

FIRST_START_BOUND = 30.0
"""Seconds a run waits for another run's CLI to start on the same home (a loaded machine
takes 10 s to start 0.61.0)."""

_LOCK_NAME = "(first start)"
"""Not a session id, so the lock is the home's, not a session's."""

_started: set[str] = set()
"""Homes on which a CLI started by this process printed something."""


class _Starting(Child):
    """A child that releases its home's first-start lock at its first output or its end."""

    _home = ""
    _lock: SessionLock | None = None

    async def read(self, stream: str) -> bytes:
        data = await super().read(stream)
        if self._lock is not None:
            if data:
                _started.add(self._home)
            self._release()
        return data

    async def aclose(self) -> None:
        self._release()
        await super().aclose()

    def _release(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None


async def spawn_first_start(
    gemini_home: str, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str]
) -> Child:
    """`Child.spawn`, after the other CLIs starting on ``gemini_home`` (boundedly)."""
    if gemini_home in _started:
        return await Child.spawn(argv, cwd=cwd, env=env)
    lock = SessionLock(gemini_home, _LOCK_NAME)
    acquired = False
    with anyio.move_on_after(FIRST_START_BOUND):
        await lock.acquire()
        acquired = True
    if not acquired or gemini_home in _started:  # waited long enough, or the other one got through
        lock.release()
        return await Child.spawn(argv, cwd=cwd, env=env)
    try:
        child = await _Starting.spawn(argv, cwd=cwd, env=env)
    except BaseException:
        lock.release()
        raise
    child._home, child._lock = gemini_home, lock
    return child
