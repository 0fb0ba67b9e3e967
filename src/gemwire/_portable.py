"""The few file and signal calls that differ by OS, for every layer (a leaf module).

Process trees differ by OS too; they live in ``_transport/platform/``, which only runners
may import. What ``sessions``, ``batch``, ``runners`` and ``cli`` need is here instead, so
that none of them names a POSIX-only call: ``import gemwire`` works on Windows, and
``mypy --platform win32`` / ``--platform darwin`` check each branch as that OS sees it.

Open flags absent on an OS are ``0`` there: Windows has no symlink-following flag for
``open`` (a symlink there needs a privilege to create), no FIFOs to block on, and no
``exec`` to close descriptors across (Python makes them non-inheritable already).
``O_BINARY`` is the other way round: only Windows has a text mode to turn off.

>>> import tempfile
>>> with tempfile.TemporaryFile() as file:
...     try_lock(file.fileno())
True
"""

from __future__ import annotations

import errno
import os
import signal
import sys

__all__ = (
    "HANGUP",
    "O_BINARY",
    "O_CLOEXEC",
    "O_DIRECTORY",
    "O_NOFOLLOW",
    "O_NONBLOCK",
    "UNLINKS_OPEN_FILES",
    "effective_user_id",
    "try_lock",
    "user_id",
)

if sys.platform == "win32":
    import msvcrt

    O_NOFOLLOW = O_CLOEXEC = O_NONBLOCK = O_DIRECTORY = 0
    O_BINARY = os.O_BINARY
    """Without it ``os.open`` is in text mode there: CRLF turns into LF, Ctrl-Z ends a read."""
    HANGUP: tuple[signal.Signals, ...] = ()
    """Windows has no SIGHUP: a closed console window ends its processes (CTRL_CLOSE)."""
    UNLINKS_OPEN_FILES = False
    """Windows refuses to remove a file that is open: ``os.open`` there shares no delete
    access, so ``os.unlink`` fails (a sharing violation) until every descriptor is closed."""

    def try_lock(fd: int) -> bool:
        """Lock the open file ``fd`` for this process alone; False if another holds it.

        The lock is released when ``fd`` is closed. Windows: ``msvcrt.locking`` on the
        first byte (a byte lock, mandatory, which is all Windows offers).
        """
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EDEADLK):
                return False
            raise
        return True

    def user_id() -> int | None:
        """The user's numeric id; None on Windows (no uids: temp folders are per user)."""
        return None

    def effective_user_id() -> int | None:
        """The effective user's id (0: root); None on Windows."""
        return None

else:
    import fcntl

    O_NOFOLLOW = os.O_NOFOLLOW
    O_CLOEXEC = os.O_CLOEXEC
    O_NONBLOCK = os.O_NONBLOCK
    O_DIRECTORY = os.O_DIRECTORY
    O_BINARY = 0
    HANGUP = (signal.SIGHUP,)
    """SIGHUP: the terminal closed."""
    UNLINKS_OPEN_FILES = True
    """A file may be removed while open (it goes when the last descriptor closes)."""

    def try_lock(fd: int) -> bool:
        """Lock the open file ``fd`` for this process alone; False if another holds it.

        The lock is released when ``fd`` is closed. POSIX: ``flock`` (advisory, whole file).
        """
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def user_id() -> int | None:
        """The user's numeric id; None on Windows."""
        return os.getuid()

    def effective_user_id() -> int | None:
        """The effective user's id (0: root); None on Windows."""
        return os.geteuid()
