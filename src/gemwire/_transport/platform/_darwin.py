"""macOS and the BSDs: the tree from ``ps`` (there is no ``/proc``), no launcher.

No subreaper exists here, so a process that detaches (``setsid``) and whose parent exits
belongs to launchd: only the process group, a snapshot of the tree taken before stopping,
and the tree walked again at each step reach it. Environments of other processes are not
readable without privileges, so there are no tagged processes to find.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

# mypy --platform linux and win32 skip the rest (it is unreachable there); at run time
# any OS may import it, as the doctest collection does.
assert (sys.platform != "linux" and sys.platform != "win32") or not TYPE_CHECKING

from gemwire._transport.platform._api import Launcher
from gemwire._transport.platform._posix import FdPipe, PosixTree

__all__ = (
    "SUBREAPER",
    "PsTable",
    "enlarge_pipe",
    "launcher",
    "new_tree",
    "output_pipe",
    "read_ps",
)

SUBREAPER = False


def read_ps() -> str:
    """``ps`` listing every process as ``pid ppid lstart`` (C locale: a fixed date format)."""
    # os.popen, not subprocess: the import contracts keep subprocess out of gemwire.
    with os.popen("LC_ALL=C /bin/ps -A -o pid= -o ppid= -o lstart=") as listing:
        return listing.read()


class PsTable:
    """The process table as ``ps`` shows it (``read`` is the seam the tests fake).

    >>> table = PsTable(lambda: "  1     0 Wed Nov 25 15:05:26 2026\\n 42     1 Wed Nov 25 15:05:27 2026\\n")
    >>> list(table.descendants(1)), table.start_time(7)
    ([42], None)
    """

    def __init__(self, read: Callable[[], str] = read_ps) -> None:
        self._read = read

    def _rows(self) -> dict[int, tuple[int, int]]:
        rows: dict[int, tuple[int, int]] = {}
        for line in self._read().splitlines():
            fields = line.split()
            if len(fields) != 7:
                continue
            try:
                started = time.strptime(" ".join(fields[2:]), "%a %b %d %H:%M:%S %Y")
                rows[int(fields[0])] = (int(fields[1]), int(time.mktime(started)))
            except ValueError:
                continue
        return rows

    def start_time(self, pid: int) -> int | None:
        row = self._rows().get(pid)
        return None if row is None else row[1]

    def descendants(self, root: int) -> dict[int, int]:
        rows = self._rows()
        children: dict[int, list[int]] = {}
        for pid, (parent, _) in rows.items():
            children.setdefault(parent, []).append(pid)
        tree: dict[int, int] = {}
        todo = list(children.get(root, ()))
        while todo:
            pid = todo.pop()
            tree[pid] = rows[pid][1]
            todo.extend(children.get(pid, ()))
        return tree

    def tagged(self, marker: bytes) -> dict[int, int]:
        del marker
        return {}


def new_tree(marker: bytes) -> PosixTree:
    """The tree of a child (``marker`` is unused: environments are not readable here)."""
    return PosixTree(PsTable(), marker, launcher=SUBREAPER)


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
