"""Linux: ``/proc`` for the tree, the subreaper launcher (`gemwire._transport.reaper`)
in between, and pipes enlarged with ``F_SETPIPE_SZ``."""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
from pathlib import Path
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
    """The process table as ``/proc`` shows it."""

    def start_time(self, pid: int) -> int | None:
        stat = reaper.proc_stat(pid)
        return None if stat is None else stat[1]

    def descendants(self, root: int) -> dict[int, int]:
        return reaper.process_tree(root)

    def tagged(self, marker: bytes) -> dict[int, int]:
        found: dict[int, int] = {}
        for entry in Path("/proc").glob("[0-9]*"):
            try:
                if marker not in (entry / "environ").read_bytes().split(b"\0"):
                    continue
            except OSError:
                continue  # gone, or not ours to read
            start = self.start_time(int(entry.name))
            if start is not None:
                found[int(entry.name)] = start
        return found


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
