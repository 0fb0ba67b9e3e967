"""A watchdog for a child's tree where there is no subreaper (macOS, the BSDs):
``python -I watchdog.py PARENT CHILD``.

It waits, with kqueue's ``NOTE_EXIT`` (no polling), for either gemwire (``PARENT``) or the
child (``CHILD``, which leads its own process group) to exit. The child first: its work is
done, and so is the watchdog's. gemwire first — it crashed, or was killed, even with
SIGKILL — then nobody else will stop the tree: SIGTERM to the child's group and to its
tree as ``ps`` shows it, `GRACE` seconds for the child to exit, then SIGKILL to what is
left of both. It ignores SIGINT and SIGHUP: a Ctrl-C or a closed terminal that ends gemwire
must not end its watchdog with it.

Standard library only, and not a gemwire import: it runs as a script, and `PsTable` is
shared with ``platform/_darwin.py`` from here.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

# mypy --platform win32 skips the rest (unreachable there); at run time any OS may import
# it, as the doctest collection does.
assert sys.platform != "win32" or not TYPE_CHECKING

__all__ = ("GRACE", "ExitWatch", "PsTable", "guard", "read_ps")

GRACE = 2.0
"""Seconds the child has to exit after SIGTERM once gemwire is gone."""


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


class ExitWatch(Protocol):
    """Waits for processes to exit (kqueue ``NOTE_EXIT``; a fake in the tests)."""

    def wait(self, pids: Sequence[int], timeout: float | None) -> int | None:
        """The first of ``pids`` to exit (one already gone counts); None after ``timeout``."""
        ...


def guard(
    parent: int,
    child: int,
    exits: ExitWatch,
    stop: Callable[[signal.Signals], None],
) -> bool:
    """Until ``child`` or ``parent`` exits; when ``parent`` does first, stop the tree with
    ``stop``: SIGTERM, `GRACE` seconds, then SIGKILL if the child still runs. Whether it had
    to stop anything.

    >>> class Exits:  # gemwire exits first; the child ignores SIGTERM
    ...     def wait(self, pids, timeout):
    ...         return 10 if 10 in pids else None
    >>> sent = []
    >>> guard(10, 20, Exits(), sent.append), [s.name for s in sent]
    (True, ['SIGTERM', 'SIGKILL'])
    """
    if exits.wait([parent, child], None) != parent:
        return False
    stop(signal.SIGTERM)
    if exits.wait([child], GRACE) != child:
        stop(signal.SIGKILL)
    return True


def stop_tree(child: int, table: PsTable) -> Callable[[signal.Signals], None]:
    """What `guard` calls: ``sig`` to the child's group and to every process of its tree."""

    def stop(sig: signal.Signals) -> None:
        for pid in [child, *table.descendants(child)]:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        with contextlib.suppress(OSError):
            os.killpg(child, sig)

    return stop


if sys.platform != "linux":
    import select

    class KqueueExits:
        """`ExitWatch` with kqueue: ``EVFILT_PROC`` / ``NOTE_EXIT``."""

        def __init__(self) -> None:
            self._queue = select.kqueue()
            self._watched: set[int] = set()

        def wait(self, pids: Sequence[int], timeout: float | None) -> int | None:
            for pid in pids:
                if pid in self._watched:
                    continue
                change = select.kevent(
                    pid,
                    filter=select.KQ_FILTER_PROC,
                    flags=select.KQ_EV_ADD | select.KQ_EV_ONESHOT,
                    fflags=select.KQ_NOTE_EXIT,
                )
                try:
                    self._queue.control([change], 0)
                except ProcessLookupError:
                    return pid  # gone before we looked
                self._watched.add(pid)
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                for event in self._queue.control(None, 1, left):
                    self._watched.discard(event.ident)
                    if event.ident in pids:
                        return int(event.ident)
                if deadline is not None and time.monotonic() >= deadline:
                    return None

    def main(argv: list[str]) -> None:
        parent, child = int(argv[0]), int(argv[1])
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        guard(parent, child, KqueueExits(), stop_tree(child, PsTable()))

    if __name__ == "__main__":
        main(sys.argv[1:])
