"""The macOS/BSD watchdog: `guard` against a fake `ExitWatch`, `stop_tree` for real here,
and kqueue for real where it exists (the CI workflow's macOS job)."""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kit.processes import alive

# mypy --platform win32 skips the rest, as it skips the watchdog itself (Windows: a job).
assert sys.platform != "win32" or not TYPE_CHECKING

from gemwire._transport import watchdog
from gemwire._transport.watchdog import GRACE, PsTable, guard, stop_tree

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="macOS/BSD (Windows: a job)")

PARENT, CHILD = 10, 20


class Exits:
    """`ExitWatch` over a script: the order in which processes exit."""

    def __init__(self, order: list[int], *, child_ends_on: signal.Signals | None) -> None:
        self.order = order
        self.child_ends_on = child_ends_on
        self.waits: list[tuple[list[int], float | None]] = []
        self.sent: list[signal.Signals] = []

    def stop(self, sig: signal.Signals) -> None:
        self.sent.append(sig)
        if sig == self.child_ends_on:
            self.order.append(CHILD)

    def wait(self, pids: Sequence[int], timeout: float | None) -> int | None:
        self.waits.append((list(pids), timeout))
        while self.order:
            pid = self.order.pop(0)
            if pid in pids:
                return pid
        return None


def test_the_child_exiting_first_ends_the_watch_and_stops_nothing() -> None:
    exits = Exits([CHILD], child_ends_on=None)
    assert guard(PARENT, CHILD, exits, exits.stop) is False
    assert (exits.sent, exits.waits) == ([], [([PARENT, CHILD], None)])


def test_gemwire_gone_first_gets_the_child_a_sigterm_and_its_grace() -> None:
    exits = Exits([PARENT], child_ends_on=signal.SIGTERM)
    assert guard(PARENT, CHILD, exits, exits.stop) is True
    assert exits.sent == [signal.SIGTERM]
    assert exits.waits == [([PARENT, CHILD], None), ([CHILD], GRACE)]


def test_a_child_that_ignores_sigterm_gets_sigkill_after_the_grace() -> None:
    exits = Exits([PARENT], child_ends_on=signal.SIGKILL)
    assert guard(PARENT, CHILD, exits, exits.stop) is True
    assert exits.sent == [signal.SIGTERM, signal.SIGKILL]


# A session of its own (macOS has no setsid command), its pid written once it is in it.
DETACHED = """
import os, sys, time
os.setsid()
with open(sys.argv[1] + ".part", "w") as f:
    f.write(str(os.getpid()))
os.replace(sys.argv[1] + ".part", sys.argv[1])
time.sleep(600)
"""


def test_stop_tree_reaches_the_group_and_a_detached_descendant(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    detach = shlex.join([sys.executable, "-c", DETACHED, str(pid_file)])
    script = f"{detach} >/dev/null 2>&1 & trap '' TERM; while :; do sleep 1; done"
    with subprocess.Popen(["sh", "-c", script], start_new_session=True) as child:
        deadline = time.monotonic() + 30
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline
            time.sleep(0.02)
        detached = int(pid_file.read_text())
        stop_tree(child.pid, PsTable())(signal.SIGKILL)
        assert child.wait(10) == -signal.SIGKILL
    assert not alive(detached, settle=10)


@pytest.mark.skipif(
    sys.platform in ("linux", "win32"), reason="kqueue exists on macOS and the BSDs"
)
def test_kqueue_sees_a_process_exit() -> None:  # pragma: no cover - runs in CI on macOS
    exits = watchdog.KqueueExits()  # type: ignore[attr-defined,unused-ignore]
    with subprocess.Popen(["sleep", "0.2"]) as short, subprocess.Popen(["sleep", "600"]) as long:
        assert exits.wait([long.pid, short.pid], 30) == short.pid
        assert exits.wait([long.pid], 0.1) is None
        long.kill()
