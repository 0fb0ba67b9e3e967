"""The few file, signal and command-line rules that differ by OS, for every layer (a leaf
module).

Process trees differ by OS too; they live in ``_transport/platform/``, which only runners
may import. What ``sessions``, ``batch``, ``runners`` and ``cli`` need is here instead, so
that none of them names a POSIX-only call: ``import gemwire`` works on Windows, and
``mypy --platform win32`` / ``--platform darwin`` check each branch as that OS sees it.

Open flags absent on an OS are ``0`` there: Windows has no symlink-following flag for
``open`` (a symlink there needs a privilege to create), no FIFOs to block on, and no
``exec`` to close descriptors across (Python makes them non-inheritable already).
``O_BINARY`` is the other way round: only Windows has a text mode to turn off.

A command given as one line of text (`split_command`) is split by the rules of the OS it
runs on: there are no shell quoting rules on Windows, where each program parses its own
command line, and a backslash is a path's separator, not an escape.

>>> import tempfile
>>> with tempfile.TemporaryFile() as file:
...     try_lock(file.fileno())
True
"""

from __future__ import annotations

import contextlib
import errno
import os
import shlex
import signal
import stat
import sys
import time

__all__ = (
    "CTRL_BREAK",
    "HANGUP",
    "O_BINARY",
    "O_CLOEXEC",
    "O_DIRECTORY",
    "O_NOFOLLOW",
    "O_NONBLOCK",
    "RECEIVES_SIGNALS",
    "STOP_SIGNALS",
    "UNLINKS_OPEN_FILES",
    "block_signals",
    "effective_user_id",
    "not_regular",
    "split_command",
    "try_lock",
    "user_id",
    "wait_for_signal",
)


_NOT_REGULAR = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def not_regular(mode: int) -> str | None:
    """What a file of ``mode`` is when it is not a regular file, in words; ``None`` for a
    regular file. Readers that refuse anything but a regular file (a FIFO would block them,
    a device never end) say what they found with it.

    >>> not_regular(os.stat(".").st_mode)
    'a folder'
    """
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _NOT_REGULAR if test(mode)), "not a file")


def split_command(text: str, platform: str = sys.platform) -> list[str]:
    r"""The words of a command given as one line of text, as ``platform`` splits it.

    POSIX: a shell's words (`shlex.split`). Windows: the Microsoft C runtime's rules, by
    which the program would split that line itself (`CommandLineToArgvW` splits the same,
    but for ``""`` inside quotes), and which `subprocess.list2cmdline` writes: blanks
    separate words, ``"`` groups them; a backslash is itself except before ``"`` (``\"``
    is a quote, ``\\"`` a backslash then a grouping quote); ``""`` inside quotes is a
    quote. The first word, the program, is read as Windows reads a program's path: ``"``
    groups and nothing escapes (no path holds a quote, and a folder's ends in ``\``).

    >>> split_command(r'"C:\Program Files\agent.cmd" --root C:\work "a \"b\""', "win32")
    ['C:\\Program Files\\agent.cmd', '--root', 'C:\\work', 'a "b"']
    >>> split_command(r"my-agent --root C:\work", "linux")
    ['my-agent', '--root', 'C:work']

    Raises `ValueError` for a line POSIX rules cannot split (a quote left open).
    """
    if platform != "win32":
        return shlex.split(text)
    words: list[str] = []
    at = _blanks(text, 0)
    if at < len(text):
        program, quoted = [], False
        while at < len(text) and (quoted or text[at] not in " \t"):
            if text[at] == '"':
                quoted = not quoted
            else:
                program.append(text[at])
            at += 1
        words.append("".join(program))
    while (at := _blanks(text, at)) < len(text):
        word, at = _windows_word(text, at)
        words.append(word)
    return words


def _blanks(text: str, at: int) -> int:
    """Past the spaces and tabs from ``at``."""
    while at < len(text) and text[at] in " \t":
        at += 1
    return at


def _windows_word(text: str, at: int) -> tuple[str, int]:
    """The argument at ``at`` by the C runtime's rules, and where it ends."""
    word: list[str] = []
    quoted = False
    while at < len(text) and (quoted or text[at] not in " \t"):
        if text[at] == "\\":
            end = at
            while end < len(text) and text[end] == "\\":
                end += 1
            if end < len(text) and text[end] == '"':
                word.append("\\" * ((end - at) // 2))
                if (end - at) % 2:  # the last backslash makes the quote a quote
                    word.append('"')
                    end += 1
            else:
                word.append("\\" * (end - at))
            at = end
        elif text[at] == '"':
            if quoted and text[at + 1 : at + 2] == '"':
                word.append('"')
                at += 2
            else:
                quoted = not quoted
                at += 1
        else:
            word.append(text[at])
            at += 1
    return "".join(word), at


if sys.platform == "win32":
    import msvcrt

    O_NOFOLLOW = O_CLOEXEC = O_NONBLOCK = O_DIRECTORY = 0
    O_BINARY = os.O_BINARY
    """Without it ``os.open`` is in text mode there: CRLF turns into LF, Ctrl-Z ends a read."""
    HANGUP: tuple[signal.Signals, ...] = ()
    """Windows has no SIGHUP: a closed console window ends its processes (CTRL_CLOSE)."""
    STOP_SIGNALS: tuple[signal.Signals, ...] = ()
    """None an event loop can receive: asyncio receives no signals on Windows, Ctrl-C
    arrives as ``KeyboardInterrupt``, and SIGTERM from ``os.kill`` is ``TerminateProcess``
    (nothing of the process runs)."""
    RECEIVES_SIGNALS = False
    """asyncio's signal handlers do not exist on Windows."""
    CTRL_BREAK: tuple[signal.Signals, ...] = (signal.SIGBREAK,)
    """Ctrl-Break, which by default ends Python on the spot (no ``finally`` runs)."""
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

    def block_signals(signals: list[signal.Signals]) -> None:
        """Nothing to block: Ctrl-C arrives as ``KeyboardInterrupt`` in the main thread."""

    def wait_for_signal(signals: list[signal.Signals]) -> None:
        """Until Ctrl-C (``KeyboardInterrupt``; ``signals`` can hold nothing else here)."""
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)  # interruptible by Ctrl-C, unlike a lock's wait

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
    STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
    """The signals that ask a program to stop, besides Ctrl-C, which an event loop can
    receive (``anyio.open_signal_receiver``)."""
    RECEIVES_SIGNALS = True
    """Whether an event loop can receive signals."""
    CTRL_BREAK: tuple[signal.Signals, ...] = ()
    """No Ctrl-Break: Windows only."""
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

    def block_signals(signals: list[signal.Signals]) -> None:
        """Block ``signals`` in this thread (and the threads it starts from now on), so
        that they wait for `wait_for_signal` instead of interrupting whatever runs."""
        signal.pthread_sigmask(signal.SIG_BLOCK, signals)

    def wait_for_signal(signals: list[signal.Signals]) -> None:
        """Until one of the blocked ``signals`` comes (``sigwait``)."""
        signal.sigwait(signals)

    def effective_user_id() -> int | None:
        """The effective user's id (0: root); None on Windows."""
        return os.geteuid()
