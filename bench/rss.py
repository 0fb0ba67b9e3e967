"""The resident memory of the processes a benchmark starts: the sum of VmRSS over this
process's descendants (Linux ``/proc``), sampled every 50 ms by a thread.

Shared by the benchmarks (``from rss import PeakRss``: a script's folder is on its
``sys.path``, and bench/ is on mypy's path).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Self

__all__ = ("PeakRss", "descendants_rss")


def descendants_rss(root: int) -> int:
    """Bytes resident in the descendants of process ``root``, grandchildren included."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue  # exited meanwhile
        children.setdefault(parent, []).append(int(entry.name))
    total, todo = 0, list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        todo += children.get(pid, ())
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


class PeakRss:
    """The peak of `descendants_rss` of this process while the ``with`` block runs.

    ``enabled=False`` samples nothing (the sampler's CPU would count as this process's)."""

    def __init__(self, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> Self:
        if self.enabled:
            self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        if self.enabled:
            self._thread.join()

    def _sample(self) -> None:
        me = os.getpid()
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, descendants_rss(me))
