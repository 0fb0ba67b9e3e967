"""Linux: ``/proc`` for the tree, the subreaper launcher (`gemwire._transport.reaper`)
in between, and pipes enlarged with ``F_SETPIPE_SZ``."""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import sys
from typing import TYPE_CHECKING

import anyio

# mypy --platform skips the rest where this is false; at run time any OS may import it,
# as the doctest collection does.
assert sys.platform == "linux" or not TYPE_CHECKING

from gemwire._transport import reaper
from gemwire._transport.platform._posix import FdPipe, PosixTree, shell_argv, shell_command

__all__ = (
    "SUBREAPER",
    "ProcTable",
    "ReaperLauncher",
    "enlarge_pipe",
    "launcher",
    "new_tree",
    "output_pipe",
    "shell_argv",
    "shell_command",
)

SUBREAPER = bool(sys.executable) and os.path.isdir("/proc")
"""Whether children start through the subreaper launcher."""


class ProcTable:
    """The process table as ``/proc`` shows it; `tagged` looks only at the processes that
    started after the table was made (the tree's: made before its child starts)."""

    def __init__(self) -> None:
        self._made = next(_ticks)

    def start_time(self, pid: int) -> int | None:
        stat = reaper.proc_stat(pid)
        return None if stat is None else stat[1]

    def descendants(self, root: int) -> dict[int, int]:
        return reaper.process_tree(root)

    def tagged(self, marker: bytes) -> dict[int, int]:
        # Runs after every child has exited. Reading every process's environment each time
        # is most of a one-turn batch task's CPU on a busy machine (bench/eval_overhead.py);
        # a process listed before this table was made is not this tree's and cannot have
        # inherited its marker, which is new with the tree, so its environment is not read.
        global _first_listed
        listing = _listing()
        tick = next(_ticks)  # after the listing: each process in it started before this
        first_listed: dict[int, tuple[int, int]] = {}
        found: dict[int, int] = {}
        for pid, inode in listing:
            first = _first_listed.get(pid)
            if first is not None and first[0] == inode:  # the same process: a new one at a
                first_listed[pid] = first  # reused pid has an entry of a new inode
                if first[1] < self._made:
                    continue
            elif inode > 1:  # 1: /proc could not say
                first_listed[pid] = (inode, tick)
            environ = _environ(pid)
            if marker in environ and marker in environ.split(b"\0"):
                start = self.start_time(pid)
                if start is not None:
                    found[pid] = start
        _first_listed = first_listed
        return found


_ticks = itertools.count()
"""Orders the making of each `ProcTable` and the end of each listing of ``/proc``."""

_first_listed: dict[int, tuple[int, int]] = {}
"""pid -> its ``/proc`` entry's inode and the tick of the first listing that held it,
for every process in the last listing."""


def _listing() -> list[tuple[int, int]]:
    """Each process in ``/proc``, as pid and its entry's inode (read with the entry)."""
    with os.scandir("/proc") as entries:
        return [(int(e.name), e.inode()) for e in entries if e.name.isdigit()]


def _environ(pid: int) -> bytes:
    """``/proc/PID/environ``; empty if the process is gone or not ours to read."""
    try:
        fd = os.open(f"/proc/{pid}/environ", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return b""
    chunks = []
    try:
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    except OSError:
        return b""
    finally:
        os.close(fd)
    return b"".join(chunks)


def new_tree(marker: bytes) -> PosixTree:
    """The tree of a child whose processes carry ``marker`` in their environment."""
    return PosixTree(ProcTable(), marker, launcher=SUBREAPER)


def enlarge_pipe(fd: int, size: int) -> None:
    """Make the pipe ``fd`` hold ``size`` bytes, where this system allows that much."""
    with contextlib.suppress(OSError):  # capped lower by this system: keep the default
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, size)


def output_pipe(capacity: int) -> FdPipe:
    """A pipe of ``capacity`` bytes where the system allows it."""
    return FdPipe(lambda fd: enlarge_pipe(fd, capacity))


class ReaperLauncher:
    """``python -I reaper.py STATUS_FD PPID``: the subreaper, and its word on starting."""

    def __init__(self) -> None:
        self._read_fd, self._write_fd = os.pipe()

    def argv(self) -> list[str]:
        return [sys.executable, "-I", reaper.__file__, str(self._write_fd), str(os.getpid())]

    def pass_fds(self) -> tuple[int, ...]:
        return (self._write_fd,)

    async def outcome(self) -> int:
        """0, or the errno (a closed pipe: 0, and the exit status tells the rest)."""
        self._close_write()
        os.set_blocking(self._read_fd, False)
        data = b""
        try:
            while True:
                await anyio.wait_readable(self._read_fd)
                try:
                    chunk = os.read(self._read_fd, 64)
                except BlockingIOError:
                    continue
                if not chunk:
                    break
                data += chunk
        finally:
            self.close()
        return int(data) if data.isdigit() else 0

    def close(self) -> None:
        self._close_write()
        if self._read_fd >= 0:
            os.close(self._read_fd)
            self._read_fd = -1

    def _close_write(self) -> None:
        if self._write_fd >= 0:
            os.close(self._write_fd)
            self._write_fd = -1


def launcher() -> ReaperLauncher | None:
    """The subreaper launcher, where children start through it."""
    return ReaperLauncher() if SUBREAPER else None
