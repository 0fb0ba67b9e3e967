"""Process trees on POSIX systems: a session of its own, signals to its group and its tree.

Shared by Linux and macOS/BSD; what differs between them is how the tree is found
(`ProcessTable`: ``/proc`` on Linux, ``ps`` on macOS/BSD) and whether a launcher is in
between (the Linux subreaper).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import anyio
from anyio.abc import ByteReceiveStream

# mypy --platform skips the rest where this is false; at run time any OS may import it,
# as the doctest collection does.
assert sys.platform != "win32" or not TYPE_CHECKING

from gemwire._transport.platform._api import PopenOptions

__all__ = ("FdPipe", "PosixTree", "ProcessTable", "shell_argv", "shell_command", "signal_group")


class ProcessTable(Protocol):
    """The live processes, as pid -> start time (an opaque number that changes when a pid
    is reused)."""

    def start_time(self, pid: int) -> int | None:
        """``pid``'s start time; None if it is gone or a zombie."""
        ...

    def descendants(self, root: int) -> dict[int, int]:
        """Every descendant of ``root``."""
        ...

    def tagged(self, marker: bytes) -> dict[int, int]:
        """Every process whose environment holds ``marker`` (``NAME=value``) where the
        system shows environments; empty where it does not."""
        ...


def shell_argv(line: str) -> list[str]:
    """``/bin/sh -c LINE``, as ``subprocess`` runs a shell command."""
    return ["/bin/sh", "-c", line]


def shell_command(line: str) -> list[str]:
    """`shell_argv`: a list, which a launcher can go before."""
    return shell_argv(line)


def signal_group(pgid: int, sig: signal.Signals) -> None:
    """Signal every process in the group; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class PosixTree:
    """The child leads a new session; stopping signals its group, every process of a
    snapshot of its tree taken first, and every process carrying the run's tag."""

    def __init__(
        self, table: ProcessTable, marker: bytes, *, launcher: bool, tagged: bool = True
    ) -> None:
        self._table = table
        self._marker = marker
        self._launcher = launcher
        self._tagged = tagged
        self._pid: int | None = None
        self._snapshot: dict[int, int] = {}

    def popen_options(self) -> PopenOptions:
        return {"start_new_session": True}

    def started(self, pid: int) -> None:
        self._pid = pid

    def terminate(self) -> None:
        if self._pid is None:
            return
        self._snapshot = self._table.descendants(self._pid)  # before the CLI orphans them
        signal_group(self._pid, signal.SIGTERM)
        self._signal_all(self._snapshot | self._table.tagged(self._marker), signal.SIGTERM)

    def escalate(self) -> bool:
        # The Linux launcher kills what escaped and exits as the program did; a SIGKILL
        # to the group first would orphan the escapees again.
        if not self._launcher or self._pid is None:
            return False
        with contextlib.suppress(ProcessLookupError):
            os.kill(self._pid, signal.SIGUSR1)
        return True

    def kill(self) -> None:
        if self._pid is None:
            return
        signal_group(self._pid, signal.SIGKILL)
        self._signal_all(self._snapshot | self._table.tagged(self._marker), signal.SIGKILL)

    def kill_leftovers(self) -> None:
        # By the tag where the system shows environments: once the leader is reaped and
        # its group is empty, its pid (and group id) may belong to an unrelated process
        # (pid_max can be as low as 32768). Where it does not, the group: POSIX reuses
        # no pid as long as a group of that id has a member, so a group with leftovers
        # is still theirs; only an emptied one reused in that instant would be hit.
        if self._tagged:
            self._signal_all(self._table.tagged(self._marker), signal.SIGKILL)
        elif self._pid is not None:
            signal_group(self._pid, signal.SIGKILL)

    def close(self) -> None:
        self._snapshot = {}

    def _signal_all(self, processes: dict[int, int], sig: signal.Signals) -> None:
        for pid, start in processes.items():
            if self._table.start_time(pid) == start:  # still that process, not a reused pid
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)


class FdPipe:
    """A pipe of gemwire's own, read without blocking as the event loop says it is ready."""

    def __init__(self, enlarge: Callable[[int], None]) -> None:
        self._read_fd, self.child_end = os.pipe()
        enlarge(self.child_end)
        os.set_blocking(self._read_fd, False)

    def started(self, stream: ByteReceiveStream | None) -> None:
        del stream
        # Only the child may hold the write end, or reading would never see EOF.
        self._close_child_end()

    async def read(self, size: int) -> bytes:
        while True:
            await anyio.wait_readable(self._read_fd)
            try:
                return os.read(self._read_fd, size)
            except BlockingIOError:
                continue  # woken without data

    def close(self) -> None:
        self._close_child_end()
        if self._read_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._read_fd)
            self._read_fd = -1

    def _close_child_end(self) -> None:
        if self.child_end >= 0:
            with contextlib.suppress(OSError):
                os.close(self.child_end)
            self.child_end = -1
