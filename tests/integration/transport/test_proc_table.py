"""Linux's `ProcTable.tagged`: the processes carrying a tree's marker, read from ``/proc``.

It runs after every child has exited, over every process on the machine, so it reads the
environment only of the processes listed after its table was made (a tree's table is
made before its child starts, and its marker is new with it): these tests hold it to
finding every one of those that carries the marker as a whole entry, whichever sweep
listed it first, and to reading a process at a reused pid again.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import pytest

# mypy --platform darwin skips the rest, as it skips the module under test.
assert sys.platform == "linux" or not TYPE_CHECKING

from gemwire._transport.platform import _linux
from gemwire._transport.platform._linux import ProcTable

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="/proc is Linux's")

SLEEP = shutil.which("sleep") or "/bin/sleep"


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[bytes]]]:
    """The processes a test starts, killed and reaped after it."""
    processes: list[subprocess.Popen[bytes]] = []
    yield processes
    for process in processes:
        process.kill()
        process.wait()


def start(processes: list[subprocess.Popen[bytes]], env: Mapping[str, str]) -> int:
    process = subprocess.Popen([SLEEP, "60"], env=dict(env))
    processes.append(process)
    return process.pid


def new_marker() -> tuple[str, bytes]:
    tag = uuid.uuid4().hex
    return tag, f"GEMWIRE_RUN={tag}".encode()


def test_finds_each_process_started_after_the_table_with_the_marker_as_a_whole_entry(
    started: list[subprocess.Popen[bytes]],
) -> None:
    tag, marker = new_marker()
    table = ProcTable()
    first = start(started, {"GEMWIRE_RUN": tag, "A": "1"})
    middle = start(started, {"A": "1", "GEMWIRE_RUN": tag, "Z": "2"})
    last = start(started, {"A": "1", "GEMWIRE_RUN": tag})
    start(started, {"GEMWIRE_RUN": tag + "0"})  # a longer value: another run's
    start(started, {"OTHER": f"GEMWIRE_RUN={tag}"})  # the bytes, inside another entry
    start(started, {"A": "1"})
    found = table.tagged(marker)
    assert found == {pid: table.start_time(pid) for pid in (first, middle, last)}


def test_a_process_first_listed_by_another_trees_sweep_is_still_found(
    started: list[subprocess.Popen[bytes]],
) -> None:
    _, other_marker = new_marker()
    earlier = ProcTable()  # made before: its sweep lists the process first
    tag, marker = new_marker()
    table = ProcTable()
    pid = start(started, {"GEMWIRE_RUN": tag})
    assert earlier.tagged(other_marker) == {}
    assert ProcTable().tagged(other_marker) == {}  # made after: skips it, and lists it
    assert table.tagged(marker) == {pid: table.start_time(pid)}
    assert table.tagged(marker) == {pid: table.start_time(pid)}  # every sweep


def test_processes_listed_before_the_table_was_made_are_not_read(
    started: list[subprocess.Popen[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    tag, marker = new_marker()
    before = start(started, {"GEMWIRE_RUN": tag})  # not the table's: it cannot have its tag
    ProcTable().tagged(marker)  # lists it
    table = ProcTable()
    after = start(started, {"GEMWIRE_RUN": tag})
    read: list[int] = []
    environ = _linux._environ

    def reading(pid: int) -> bytes:
        read.append(pid)
        return environ(pid)

    monkeypatch.setattr(_linux, "_environ", reading)
    assert table.tagged(marker) == {after: table.start_time(after)}
    assert after in read
    assert before not in read


def test_a_pid_taken_by_a_new_process_is_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new process at a pid has a ``/proc`` entry of a new inode (1: unknown)."""
    _, marker = new_marker()
    listing = [(4242, 7)]
    monkeypatch.setattr(_linux, "_listing", lambda: listing)
    monkeypatch.setattr(_linux, "_environ", lambda pid: b"A=1\0" + marker + b"\0")
    ProcTable().tagged(b"OTHER=1")  # pid 4242 listed as inode 7
    table = ProcTable()
    monkeypatch.setattr(table, "start_time", lambda pid: 99)
    assert table.tagged(marker) == {}  # the same process: there before the table
    for inode in (8, 1, 1):
        listing[:] = [(4242, inode)]
        assert table.tagged(marker) == {4242: 99}
