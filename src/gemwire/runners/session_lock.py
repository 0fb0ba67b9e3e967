"""One run per Gemini session at a time, across threads and processes.

Two runs resuming the same session would interleave their records in one session file.
A run holds an exclusive ``flock`` on a lock file named after the Gemini home and the
session id (in the system's temporary folder, never in the Gemini home itself); another
run of the same session waits for it, polling, so waiting stays cancellable.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
from pathlib import Path

import anyio

__all__ = ("SessionLock",)

_POLL = 0.1


class SessionLock:
    def __init__(self, gemini_home: str, session_id: str) -> None:
        self.session_id = session_id
        digest = hashlib.sha256(f"{gemini_home}\0{session_id}".encode()).hexdigest()[:32]
        folder = Path(tempfile.gettempdir()) / f"gemwire-sessions-{os.getuid()}"
        folder.mkdir(mode=0o700, exist_ok=True)
        self._path = folder / f"{digest}.lock"
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    async def acquire(self) -> None:
        # Polling: another process holds it, so there is nothing to wait on but time.
        while not self.try_acquire():  # noqa: ASYNC110
            await anyio.sleep(_POLL)

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)  # closing releases the flock
            self._fd = None
