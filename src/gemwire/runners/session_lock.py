"""One run per Gemini session at a time, across threads and processes.

Two runs resuming the same session would interleave their records in one session file.
A run holds an exclusive lock (``flock``; on Windows ``msvcrt.locking``, see
`gemwire._portable`) on a lock file named after the Gemini home and the
session id, in a folder of the user's own (never in the Gemini home itself); another run
of the same session waits for it, polling, so waiting stays cancellable.

The folder is ``$XDG_RUNTIME_DIR/gemwire-sessions`` where that is set, else
``gemwire-sessions-<uid>`` in the system's temporary folder. In a shared temporary folder
another user can create that name first, or plant symlinks in it, so a folder that is not
ours, is a symlink or is writable by others is refused (`LockFolderUnsafe`), and lock files
are opened with ``O_NOFOLLOW``. On Windows the folder is ``gemwire-sessions`` in the
user's own temporary folder, and there are no uids or mode bits to check.

A lock file is removed when its lock is released, and so is every lock file nobody holds
(left by a run that was killed). A waiter that locked a file just removed sees that its
inode is no longer the one at the path and tries again.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import tempfile
from pathlib import Path

import anyio

from gemwire._portable import O_CLOEXEC, O_NOFOLLOW, try_lock, user_id
from gemwire.errors import LockFolderUnsafe

__all__ = ("SessionLock", "lock_folder")

_POLL = 0.1
_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | O_NOFOLLOW | O_CLOEXEC


def lock_folder() -> Path:
    """The folder for lock files, created if missing; raises `LockFolderUnsafe`."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    uid = user_id()
    if os.path.isabs(runtime):
        folder = Path(runtime) / "gemwire-sessions"
    else:
        suffix = "" if uid is None else f"-{uid}"
        folder = Path(tempfile.gettempdir()) / f"gemwire-sessions{suffix}"
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    info = folder.lstat()
    problem = None
    if not stat.S_ISDIR(info.st_mode):
        problem = "it is not a folder (a symlink?)"
    elif uid is None:
        pass  # Windows: no uids or mode bits to check; the temporary folder is the user's
    elif info.st_uid != uid:
        problem = f"it belongs to uid {info.st_uid}, not to you (uid {uid})"
    elif info.st_mode & 0o022:
        problem = f"others may write to it (mode {stat.S_IMODE(info.st_mode):o})"
    if problem:
        raise LockFolderUnsafe(
            f"refusing the session lock folder {folder}: {problem}; remove it, or set "
            "XDG_RUNTIME_DIR to a folder of your own",
            path=str(folder),
        )
    return folder


def _lock_unheld(path: Path) -> int | None:
    """An fd holding the lock of ``path`` if nobody else holds it and the file is still
    the one at ``path``; else None."""
    try:
        fd = os.open(path, _OPEN_FLAGS, 0o600)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        raise LockFolderUnsafe(f"refusing the lock file {path}: it is a symlink") from exc
    try:
        # Locked a file that its holder removed on release: the lock is the new file's.
        if try_lock(fd) and os.fstat(fd).st_ino == os.stat(path, follow_symlinks=False).st_ino:
            return fd
    except FileNotFoundError:
        pass
    os.close(fd)
    return None


def _remove_unheld(folder: Path) -> None:
    """Remove lock files nobody holds (their runs ended or were killed)."""
    for path in folder.glob("*.lock"):
        with contextlib.suppress(OSError):
            fd = _lock_unheld(path)
            if fd is not None:
                path.unlink()  # while holding it, so a waiter on it retries
                os.close(fd)


class SessionLock:
    def __init__(self, gemini_home: str, session_id: str) -> None:
        """Raises `LockFolderUnsafe` when the lock folder is not the user's alone."""
        self.session_id = session_id
        digest = hashlib.sha256(f"{gemini_home}\0{session_id}".encode()).hexdigest()[:32]
        self._folder = lock_folder()
        self._path = self._folder / f"{digest}.lock"
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        self._fd = _lock_unheld(self._path)
        return self._fd is not None

    async def acquire(self) -> None:
        # Polling: another process holds it, so there is nothing to wait on but time.
        while not self.try_acquire():  # noqa: ASYNC110
            await anyio.sleep(_POLL)

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                self._path.unlink()
            with contextlib.suppress(OSError):
                os.close(self._fd)  # closing releases the flock
            self._fd = None
            _remove_unheld(self._folder)
