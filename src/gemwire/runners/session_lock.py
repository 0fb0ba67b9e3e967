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
inode is no longer the one at the path and tries again. Windows refuses to remove a file
that is open (`_let_go`): there a file is removed once closed, if nobody else has it open.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Protocol

import anyio

from gemwire._portable import O_CLOEXEC, O_NOFOLLOW, UNLINKS_OPEN_FILES, try_lock, user_id
from gemwire.errors import LockFolderUnsafe

__all__ = ("LockFiles", "SessionLock", "SystemLockFiles", "lock_folder")

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


class LockFiles(Protocol):
    """The file calls a lock makes (`SystemLockFiles`; in the tests, a fake of Windows'
    rule that an open file cannot be removed)."""

    unlinks_open_files: bool
    """Whether a file may be removed while open (`gemwire._portable.UNLINKS_OPEN_FILES`)."""

    def open(self, path: Path) -> int:
        """Open (or create) the lock file ``path``, never through a symlink."""
        ...

    def lock(self, fd: int) -> bool:
        """`gemwire._portable.try_lock`."""
        ...

    def close(self, fd: int) -> None:
        """``os.close``: lets go of the lock."""
        ...

    def unlink(self, path: Path) -> None:
        """Remove ``path``."""
        ...


class SystemLockFiles:
    """The OS's own calls."""

    unlinks_open_files = UNLINKS_OPEN_FILES

    def open(self, path: Path) -> int:
        return os.open(path, _OPEN_FLAGS, 0o600)

    def lock(self, fd: int) -> bool:
        return try_lock(fd)

    def close(self, fd: int) -> None:
        os.close(fd)

    def unlink(self, path: Path) -> None:
        path.unlink()


def _lock_unheld(path: Path, files: LockFiles) -> int | None:
    """An fd holding the lock of ``path`` if nobody else holds it and the file is still
    the one at ``path``; else None."""
    try:
        fd = files.open(path)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        raise LockFolderUnsafe(f"refusing the lock file {path}: it is a symlink") from exc
    try:
        # Locked a file that its holder removed on release: the lock is the new file's.
        if files.lock(fd) and os.fstat(fd).st_ino == os.stat(path, follow_symlinks=False).st_ino:
            return fd
    except FileNotFoundError:
        pass
    files.close(fd)
    return None


def _let_go(path: Path, fd: int, files: LockFiles) -> None:
    """Remove the lock file ``path`` and close ``fd``, which holds its lock.

    Removed while still held where the OS allows it, so that a waiter that opened it
    retries (closing first would let it lock a file about to be removed). Windows refuses
    to remove an open file: there it is closed first, and a file another run holds open
    stays, for a later run to remove. Closed whatever happens: an fd left open would
    hold the lock for as long as this process lives.
    """
    try:
        if files.unlinks_open_files:
            with contextlib.suppress(OSError):
                files.unlink(path)
    finally:
        files.close(fd)
    if not files.unlinks_open_files:
        with contextlib.suppress(OSError):
            files.unlink(path)


def _remove_unheld(folder: Path, files: LockFiles) -> None:
    """Remove lock files nobody holds (their runs ended or were killed)."""
    for path in folder.glob("*.lock"):
        with contextlib.suppress(OSError):
            fd = _lock_unheld(path, files)
            if fd is not None:
                _let_go(path, fd, files)


class SessionLock:
    def __init__(
        self, gemini_home: str, session_id: str, *, files: LockFiles | None = None
    ) -> None:
        """Raises `LockFolderUnsafe` when the lock folder is not the user's alone."""
        self.session_id = session_id
        self._files: LockFiles = files or SystemLockFiles()
        digest = hashlib.sha256(f"{gemini_home}\0{session_id}".encode()).hexdigest()[:32]
        self._folder = lock_folder()
        self._path = self._folder / f"{digest}.lock"
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        self._fd = _lock_unheld(self._path, self._files)
        return self._fd is not None

    async def acquire(self) -> None:
        # Polling: another process holds it, so there is nothing to wait on but time.
        while not self.try_acquire():  # noqa: ASYNC110
            await anyio.sleep(_POLL)

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            with contextlib.suppress(OSError):
                _let_go(self._path, fd, self._files)
            _remove_unheld(self._folder, self._files)
