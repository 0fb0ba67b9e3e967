"""Nothing left behind: a run fails if a process it started still runs when it ends.

On Linux the pytest process becomes a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``,
as gemwire's own launcher does), so a process whose parent exited (a detached sleeper, an
agent's grandchild in a session of its own) is adopted by pytest instead of PID 1, and stays
a descendant of the run. When the session ends, every fixture torn down, the descendants of
pytest still alive (zombies are dead) are listed, the run fails naming them, and they are
killed so that nothing is left anyway. Elsewhere there is no subreaper: the check sees the
descendants whose parents still run, and misses orphans.
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

import pytest

__all__ = ("descendants",)

PR_SET_CHILD_SUBREAPER = 36
SETTLE = 10.0
"""Seconds a descendant may take to exit once the last fixture asked it to stop."""

_LEFT = pytest.StashKey[list[tuple[int, str]]]()


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


def pytest_sessionfinish(session: pytest.Session) -> None:
    if sys.platform == "win32":
        return  # no process table to walk; the contract tests check their trees there
    deadline = time.monotonic() + SETTLE
    while (left := descendants(os.getpid())) and time.monotonic() < deadline:
        time.sleep(0.1)
    if left:
        session.config.stash[_LEFT] = left
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        for pid, _ in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    _reap()


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
