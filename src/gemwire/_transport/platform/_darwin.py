"""macOS and the BSDs: the tree from ``ps`` (there is no ``/proc``), no launcher.

No subreaper exists here, so a process that detaches (``setsid``) and whose parent exits
belongs to launchd: only the process group, a snapshot of the tree taken before stopping,
and the tree walked again at each step reach it. Tags cannot be relied on: macOS withholds
the environment of Apple's own programs (``/bin/sh``, ``sleep``) from every other process,
however privileged, so the tree looks for no tagged processes. Beside each child
runs `gemwire._transport.watchdog`, which stops the tree if gemwire dies first.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import TYPE_CHECKING

# mypy --platform linux and win32 skip the rest (it is unreachable there); at run time
# any OS may import it, as the doctest collection does.
assert (sys.platform != "linux" and sys.platform != "win32") or not TYPE_CHECKING

from gemwire._transport import watchdog
from gemwire._transport.platform._api import Launcher
from gemwire._transport.platform._posix import FdPipe, PosixTree, shell_argv, shell_command
from gemwire._transport.watchdog import PsTable

__all__ = (
    "SUBREAPER",
    "WatchedTree",
    "enlarge_pipe",
    "launcher",
    "new_tree",
    "output_pipe",
    "shell_argv",
    "shell_command",
)

SUBREAPER = False


class WatchedTree(PosixTree):
    """`PosixTree` with a `watchdog` beside the child, for when gemwire dies first."""

    def __init__(self, table: PsTable, marker: bytes) -> None:
        super().__init__(table, marker, launcher=SUBREAPER, tagged=False)
        self._watchdog: int | None = None

    def started(self, pid: int) -> None:
        super().started(pid)
        script = [sys.executable, "-I", watchdog.__file__, str(os.getpid()), str(pid)]
        self._watchdog = os.posix_spawn(sys.executable, script, os.environ)

    def close(self) -> None:
        super().close()
        if self._watchdog is not None:
            # The child is gone (or stopped): the watchdog has nothing left to guard.
            with contextlib.suppress(OSError):
                os.kill(self._watchdog, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self._watchdog, 0)
            self._watchdog = None


def new_tree(marker: bytes) -> PosixTree:
    """The tree of a child (``marker`` is unused: tags cannot be relied on here)."""
    return WatchedTree(PsTable(), marker)


def enlarge_pipe(fd: int, size: int) -> None:
    """No way to enlarge a pipe here (macOS grows pipes itself, up to 64 KiB)."""
    del fd, size


def output_pipe(capacity: int) -> FdPipe:
    """A pipe of the system's size (``capacity`` cannot be asked for here)."""
    del capacity
    return FdPipe(lambda fd: None)


def launcher() -> Launcher | None:
    """No launcher in between on macOS/BSD."""
    return None
