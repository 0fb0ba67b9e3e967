"""Nothing left behind: a run fails if a process it started still runs when it ends.

On Linux the pytest process becomes a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``,
as gemwire's own launcher does), so a process whose parent exited (a detached sleeper, an
agent's grandchild in a session of its own) is adopted by pytest instead of PID 1, and stays
a descendant of the run. When the session ends, every fixture torn down, the descendants of
pytest still alive (zombies are dead) are listed, the run fails naming them, and they are
killed so that nothing is left anyway. Elsewhere there is no subreaper: the check sees the
descendants whose parents still run, and misses orphans.

Under pytest-xdist (``make test`` runs ``-n 2``) each worker is a subreaper of its own and
checks its own descendants when its session ends; it sends what it found to the controller
(``workeroutput``), which fails the run and lists them with its own (`pytest_testnodedown`).
The controller checks last, once its workers are gone, so they are never counted.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kit.budget import load

__all__ = ("descendants",)

PR_SET_CHILD_SUBREAPER = 36
SETTLE = 10.0
"""Seconds a descendant may take to exit once the last fixture asked it to stop (times the
load average per core on a loaded machine, as `kit.budget` scales its limits)."""

_LEFT = pytest.StashKey[list[tuple[int, str]]]()
_WORKER_OUTPUT = "gemwire_left_behind"
"""The key of a worker's leftovers in its ``workeroutput`` (sent to the controller)."""


def descendants(root: int) -> list[tuple[int, str]]:
    """The live descendants of ``root``: (pid, command line), zombies left out."""
    table = _table()
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found: list[tuple[int, str]] = []
    pending = list(children.get(root, ()))
    while pending:
        pid = pending.pop()
        _, state, command = table[pid]
        if not state.startswith("Z"):
            found.append((pid, command))
        pending += children.get(pid, ())
    return sorted(found)


def _table() -> dict[int, tuple[int, str, str]]:
    """Every process: pid -> (parent pid, state, command line)."""
    if sys.platform == "linux":
        table = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
                command = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue  # exited while we looked
            table[int(stat.parent.name)] = (
                int(fields[1]),
                fields[0],
                command.decode(errors="replace"),
            )
        return table
    else:
        listing = subprocess.run(
            ["ps", "-A", "-o", "pid=", "-o", "ppid=", "-o", "stat=", "-o", "command="],
            capture_output=True,
            text=True,
            check=True,
        )
        rows = (line.split(None, 3) for line in listing.stdout.splitlines())
        return {int(row[0]): (int(row[1]), row[2], row[3] if len(row) > 3 else "") for row in rows}


def pytest_configure(config: pytest.Config) -> None:
    if sys.platform == "linux":
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    # Last: under xdist the controller's own hook (xdist's) ends the workers first.
    if sys.platform == "win32":
        return  # no process table to walk; the contract tests check their trees there
    config = session.config
    deadline = time.monotonic() + SETTLE * max(1.0, load())
    while (left := descendants(os.getpid())) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid, _ in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    _reap()
    worker_output = getattr(config, "workeroutput", None)
    if worker_output is not None:  # an xdist worker: the controller reports and fails the run
        worker_output[_WORKER_OUTPUT] = left
        return
    left = config.stash.setdefault(_LEFT, []) + left
    config.stash[_LEFT] = left
    if left:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """An xdist worker ended: keep what it left behind (its ``workeroutput``)."""
    output = getattr(node, "workeroutput", None) or {}
    left = [(int(pid), str(command)) for pid, command in output.get(_WORKER_OUTPUT, ())]
    node.config.stash.setdefault(_LEFT, []).extend(left)


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    left = config.stash.get(_LEFT, [])
    if left:
        terminalreporter.section("processes left behind", red=True, bold=True)
        terminalreporter.line(
            f"{len(left)} process(es) the run started still ran {SETTLE:.0f} s after its"
            " end (killed now; the run fails):"
        )
        for pid, command in left:
            terminalreporter.line(f"  {pid}  {command[:200]}")


def _reap() -> None:
    """Reap the zombies pytest adopted as subreaper (nothing else waits for them)."""
    if sys.platform != "win32":
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
