"""The `ProcessTree` contract, for every OS's implementation, run for real on each OS.

Here (Linux) it runs the Linux tree for real (processes, signals, the subreaper launcher),
and the macOS/BSD tree's walk (``ps``, no launcher, no tags) with the same Python
processes the macOS world starts. The CI workflow's macOS and Windows jobs run it for real
there: macOS's `WatchedTree` (its kqueue watchdog beside each child) and Windows' Job
Object through kernel32 (`kernel32_jobs`), processes started with
``CREATE_NEW_PROCESS_GROUP``. Each of the three also loses its host to a kill (SIGKILL,
``TerminateProcess``) and must leave nothing running: the launcher, the watchdog, the
job's ``KILL_ON_JOB_CLOSE``. Windows' `JobTree` runs the contract here too, against
`FakeWindows`, a model of the kernel32 calls behind `JobApi` (a process started by a
process of a job is in that job; a job closed with ``KILL_ON_JOB_CLOSE`` ends its
processes; ``CTRL_BREAK_EVENT`` reaches one process group).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import anyio
import pytest
from kit.processes import alive

from gemwire._transport import platform
from gemwire._transport.platform import ProcessTree
from gemwire._transport.platform._windows import (
    CREATE_NEW_PROCESS_GROUP,
    CTRL_BREAK_EVENT,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JobTree,
)

# The trees are synchronous; the launcher's word is read on anyio.
pytestmark = [pytest.mark.anyio, pytest.mark.anyio_backends("asyncio")]

POLITE = "polite"
"""A leader that exits with status 0 when asked to stop, its descendant with it."""
STUBBORN = "stubborn"
"""A leader that ignores being asked, with a descendant that detached (a session or
group of its own, no tag)."""
LEFTOVER = "leftover"
"""A leader that exits at once, leaving a descendant running."""


class World(Protocol):
    """Processes as one OS runs them, started under a `ProcessTree`."""

    @property
    def tree(self) -> ProcessTree:
        """The tree under test."""
        ...

    async def start(self, kind: str) -> tuple[int, list[int]]:
        """Start a leader of ``kind`` under ``tree``: (leader pid, descendant pids)."""
        ...

    def alive(self, pid: int) -> bool:
        """Whether ``pid`` still runs, waiting a moment for one that is exiting."""
        ...

    def exit_status(self, pid: int) -> int | None:
        """The leader's exit status once it exited (negative: killed); None while it runs."""
        ...

    def own_group(self, pid: int) -> bool:
        """Whether ``pid`` leads a process group other than gemwire's."""
        ...


# --- Linux, for real -------------------------------------------------------------------


# Type-checked as Linux sees it; on another OS only the modelled Windows world runs here.
if sys.platform == "linux":
    from gemwire._transport.platform import _linux
    from gemwire._transport.platform._posix import PosixTree
    from gemwire._transport.watchdog import PsTable

    def _proc_state(pid: int) -> str | None:
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return None

    LINUX_SCRIPTS = {
        POLITE: "trap 'exit 0' TERM; echo $$ > {pids}.0; sleep 600 & echo $! > {pids}.1; wait",
        STUBBORN: "trap '' TERM; echo $$ > {pids}.0; "
        "env -i setsid sh -c 'echo $$ > {pids}.1; exec sleep 600' >/dev/null 2>&1 & "
        "while :; do sleep 1; done",
        LEFTOVER: "echo $$ > {pids}.0; sleep 600 & echo $! > {pids}.1",
    }

    class LinuxWorld:
        """Real processes under the Linux tree (``/proc``, the subreaper launcher)."""

        def __init__(self, tmp_path: Path, *, bsd: bool = False) -> None:
            self._tmp = tmp_path
            self._tag = uuid.uuid4().hex
            marker = f"GEMWIRE_RUN={self._tag}".encode()
            self.tree: ProcessTree = _linux.new_tree(marker)
            self._launcher = _linux.launcher()
            if bsd:
                # The macOS/BSD tree as it runs there, less its watchdog (kqueue): ps for the
                # walk, no launcher, no tags. This machine's ps speaks the same options.
                self.tree = PosixTree(PsTable(), marker, launcher=False, tagged=False)
                self._launcher = None
            self._processes: dict[int, subprocess.Popen[bytes]] = {}
            self._started: list[int] = []

        async def start(self, kind: str) -> tuple[int, list[int]]:
            pids = self._tmp / "pids"
            argv = ["sh", "-c", LINUX_SCRIPTS[kind].format(pids=pids)]
            # The launcher ends leftovers itself when the program exits; without it, what
            # is checked is the tree's own kill_leftovers.
            launcher = None if kind == LEFTOVER else self._launcher
            process = subprocess.Popen(  # noqa: ASYNC220 - returns at once
                [*(launcher.argv() if launcher else ()), *argv],
                env={**os.environ, "GEMWIRE_RUN": self._tag},
                pass_fds=launcher.pass_fds() if launcher else (),
                **self.tree.popen_options(),
            )
            self.tree.started(process.pid)
            if launcher:
                assert await launcher.outcome() == 0
            self._processes[process.pid] = process
            deadline = time.monotonic() + 30
            files = [Path(f"{pids}.0"), Path(f"{pids}.1")]
            while not all(f.exists() and f.read_text().strip() for f in files):
                assert time.monotonic() < deadline
                await anyio.sleep(0.02)
            descendants = [int(f.read_text()) for f in files]
            if launcher is None:
                descendants.remove(process.pid)  # the leader is the shell itself
            self._started += descendants
            return process.pid, descendants

        def alive(self, pid: int) -> bool:
            if pid in self._processes:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._processes[pid].wait(5)
                return self._processes[pid].returncode is None
            deadline = time.monotonic() + 5
            while _proc_state(pid) not in (None, "Z") and time.monotonic() < deadline:
                time.sleep(0.02)
            return _proc_state(pid) not in (None, "Z")

        def exit_status(self, pid: int) -> int | None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._processes[pid].wait(5)
            return self._processes[pid].returncode

        def own_group(self, pid: int) -> bool:
            return os.getpgid(pid) == pid != os.getpgid(0)

        def cleanup(self) -> None:
            for pid in [*self._processes, *self._started]:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            for process in self._processes.values():
                process.wait()


# --- Every OS, for real: the same Python processes ---------------------------------------

PROGRAM = """
import os, signal, subprocess, sys, time
kind, pids = sys.argv[1], sys.argv[2]
windows = sys.platform == "win32"
asked = signal.SIGBREAK if windows else signal.SIGTERM  # how a tree asks it to stop

def record(n, pid):
    with open(f"{pids}.{n}.part", "w") as f:
        f.write(str(pid))
    os.replace(f"{pids}.{n}.part", f"{pids}.{n}")

while not os.path.exists(f"{pids}.go"):  # until its tree holds it (on Windows: its job)
    time.sleep(0.01)
sleeper = [sys.executable, "-c", "import time; time.sleep(600)"]
if kind == "polite":
    signal.signal(asked, lambda *_: sys.exit(0))
    descendant = subprocess.Popen(sleeper)
elif kind == "stubborn":
    signal.signal(asked, signal.SIG_IGN)
    detach = (
        {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
        if windows
        else {"start_new_session": True, "env": {}}  # no tag either
    )
    descendant = subprocess.Popen(sleeper, **detach)
else:
    descendant = subprocess.Popen(sleeper)
record(0, os.getpid())
record(1, descendant.pid)
if kind == "leftover":
    sys.exit(0)
while True:  # short sleeps: on Windows a handler runs only between them
    time.sleep(0.05)
"""
"""The processes of the real macOS and Windows worlds (`POLITE`, `STUBBORN` or
`LEFTOVER` as its first argument, where to write the pids as its second): a leader and one
descendant, as the Linux world's shell scripts, in Python because it runs on every OS."""


async def _pids_of(pids: Path) -> tuple[int, int]:
    """The leader's and the descendant's pids, once `PROGRAM` wrote them."""
    files = [Path(f"{pids}.0"), Path(f"{pids}.1")]
    deadline = time.monotonic() + 30
    while not all(f.exists() for f in files):
        assert time.monotonic() < deadline, "the program never started"
        await anyio.sleep(0.02)
    leader, descendant = (int(f.read_text()) for f in files)
    return leader, descendant


class ProgramWorld:
    """`PROGRAM`'s processes under ``tree``, started as `gemwire._transport.process` does."""

    def __init__(self, tree: ProcessTree, tmp_path: Path) -> None:
        self.tree = tree
        self._tmp = tmp_path
        self._processes: dict[int, subprocess.Popen[bytes]] = {}
        self._descendants: list[int] = []

    async def start(self, kind: str) -> tuple[int, list[int]]:
        pids = self._tmp / f"pids-{len(self._processes)}"
        process = subprocess.Popen(  # noqa: ASYNC220 - returns at once
            [sys.executable, "-c", PROGRAM, kind, str(pids)], **self.tree.popen_options()
        )
        self._processes[process.pid] = process
        self.tree.started(process.pid)
        await anyio.Path(f"{pids}.go").touch()
        leader, descendant = await _pids_of(pids)
        assert leader == process.pid
        self._descendants.append(descendant)
        return leader, [descendant]

    def alive(self, pid: int) -> bool:
        if pid in self._processes:
            return self.exit_status(pid) is None
        return alive(pid)

    def exit_status(self, pid: int) -> int | None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._processes[pid].wait(5)
        return self._processes[pid].returncode

    def own_group(self, pid: int) -> bool:
        if sys.platform == "win32":
            # Windows shows no process's group: it was started to lead one, and the
            # polite test sees Ctrl-Break to that group (the pid) reach it.
            flags = self.tree.popen_options().get("creationflags", 0)
            return bool(flags & CREATE_NEW_PROCESS_GROUP)
        else:
            return os.getpgid(pid) == pid != os.getpgid(0)

    def cleanup(self) -> None:
        self.tree.close()  # harmless after the test's own
        for process in self._processes.values():
            process.kill()
            process.wait()
        # The stubborn leader's descendant inherited its ignored SIGTERM, and a test that
        # only kill()s the tree (no terminate() first to snapshot the descendants) leaves
        # it in its session: SIGKILL it.
        if sys.platform == "win32":
            stop = signal.SIGTERM
        else:
            stop = signal.SIGKILL
        for pid in self._descendants:
            if alive(pid, settle=0):
                with contextlib.suppress(OSError):
                    os.kill(pid, stop)  # Windows: TerminateProcess


# --- Windows, modelled -----------------------------------------------------------------


@dataclass
class FakeProcess:
    group: int
    polite: bool
    job: int | None = None
    status: int | None = None


@dataclass
class FakeJob:
    limit_flags: int
    members: set[int] = field(default_factory=set)
    closed: bool = False


class FakeWindows:
    """kernel32 as `JobApi` sees it, and the processes it acts on."""

    GEMWIRE_GROUP = 1

    def __init__(self) -> None:
        self.processes: dict[int, FakeProcess] = {}
        self.jobs: dict[int, FakeJob] = {}
        self.refuse_jobs = False
        """As Windows 7 in a job that forbids nesting."""
        self._pids = itertools.count(100, 4)
        self._handles = itertools.count(0x40, 4)

    def create_job(self, limit_flags: int) -> int:
        handle = next(self._handles)
        self.jobs[handle] = FakeJob(limit_flags)
        return handle

    def assign(self, job: int, pid: int) -> None:
        if self.processes[pid].status is not None or self.refuse_jobs:
            raise PermissionError(5, "Access is denied")
        self.jobs[job].members.add(pid)
        self.processes[pid].job = job

    def terminate(self, job: int, exit_code: int) -> None:
        for pid in self.jobs[job].members:
            self._end(pid, exit_code)

    def close(self, handle: int) -> None:
        job = self.jobs[handle]
        assert not job.closed, "a handle closed twice"
        job.closed = True
        if job.limit_flags & JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE:
            for pid in job.members:
                self._end(pid, 1)

    def ctrl_event(self, event: int, group: int) -> None:
        assert event == CTRL_BREAK_EVENT
        for process in self.processes.values():
            if process.group == group and process.polite and process.status is None:
                process.status = 0

    def kill_process(self, pid: int) -> None:
        self._end(pid, 1)

    def create_process(self, parent: int | None, creationflags: int, *, polite: bool) -> int:
        """CreateProcess: a child of a process in a job is in that job."""
        pid = next(self._pids)
        inherited = self.GEMWIRE_GROUP if parent is None else self.processes[parent].group
        group = pid if creationflags & CREATE_NEW_PROCESS_GROUP else inherited
        job = None if parent is None else self.processes[parent].job
        self.processes[pid] = FakeProcess(group, polite, job)
        if job is not None:
            self.jobs[job].members.add(pid)
        return pid

    def _end(self, pid: int, code: int) -> None:
        if self.processes[pid].status is None:
            self.processes[pid].status = -code if code > 0 else code


class FakeWindowsWorld:
    def __init__(self) -> None:
        self.kernel = FakeWindows()
        self.tree = JobTree(self.kernel)

    async def start(self, kind: str) -> tuple[int, list[int]]:
        options = self.tree.popen_options()
        leader = self.kernel.create_process(
            None, options.get("creationflags", 0), polite=kind == POLITE
        )
        self.tree.started(leader)
        flags = CREATE_NEW_PROCESS_GROUP if kind == STUBBORN else 0
        descendant = self.kernel.create_process(leader, flags, polite=kind == POLITE)
        if kind == LEFTOVER:
            self.kernel.processes[leader].status = 0
        return leader, [descendant]

    def alive(self, pid: int) -> bool:
        return self.kernel.processes[pid].status is None

    def exit_status(self, pid: int) -> int | None:
        return self.kernel.processes[pid].status

    def own_group(self, pid: int) -> bool:
        return self.kernel.processes[pid].group == pid != FakeWindows.GEMWIRE_GROUP

    def cleanup(self) -> None:
        pass


REAL = {
    "linux": "linux",
    "bsd tree (ps, here)": "linux",
    "bsd tree, python processes (ps, here)": "linux",
    "macos": "darwin",
    "windows": "win32",
}
"""The real worlds, and the OS each runs on (`sys.platform`)."""


class RealWorld(World, Protocol):
    def cleanup(self) -> None:
        """Stop what is left, whatever the test did."""
        ...


def _real_world(name: str, tmp_path: Path) -> RealWorld:
    marker = f"GEMWIRE_RUN={uuid.uuid4().hex}".encode()
    if sys.platform == "linux":
        if name == "bsd tree, python processes (ps, here)":
            tree = PosixTree(PsTable(), marker, launcher=False, tagged=False)
            return ProgramWorld(tree, tmp_path)
        return LinuxWorld(tmp_path, bsd=name != "linux")
    else:  # Windows: a kernel32 JobTree; macOS: a WatchedTree
        return ProgramWorld(platform.new_tree(marker), tmp_path)


@pytest.fixture(params=[*REAL, "windows (modelled)"])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    if request.param == "windows (modelled)":
        yield FakeWindowsWorld()
        return
    if sys.platform != REAL[request.param]:
        pytest.skip(f"runs on {REAL[request.param]} (the CI workflow's job there)")
    real = _real_world(request.param, tmp_path)
    try:
        yield real
    finally:
        real.cleanup()


async def test_the_child_leads_a_group_of_its_own(world: World) -> None:
    leader, _ = await world.start(STUBBORN)
    assert world.own_group(leader)
    world.tree.kill()
    world.tree.close()


async def test_terminate_asks_and_a_polite_tree_exits_by_itself(world: World) -> None:
    leader, descendants = await world.start(POLITE)
    world.tree.terminate()
    assert world.exit_status(leader) == 0
    assert [pid for pid in descendants if world.alive(pid)] == []
    world.tree.close()


async def test_kill_ends_every_process_even_a_detached_one(world: World) -> None:
    leader, descendants = await world.start(STUBBORN)
    world.tree.terminate()
    world.tree.escalate()
    world.tree.kill()
    assert [pid for pid in [leader, *descendants] if world.alive(pid)] == []
    world.tree.close()


async def test_kill_leftovers_ends_what_an_exited_leader_left(world: World) -> None:
    leader, descendants = await world.start(LEFTOVER)
    assert world.exit_status(leader) == 0
    world.tree.kill_leftovers()
    assert not world.alive(descendants[-1])
    world.tree.close()


async def test_every_call_after_the_tree_is_gone_is_harmless(world: World) -> None:
    await world.start(STUBBORN)
    world.tree.terminate()
    world.tree.escalate()
    world.tree.kill()
    world.tree.close()
    world.tree.terminate()
    world.tree.kill()
    world.tree.kill_leftovers()
    world.tree.close()


HOST = """
import sys
from pathlib import Path
import anyio
from gemwire._transport.process import Child

async def main():
    await Child.spawn([sys.executable, "-c", sys.argv[1], "stubborn", sys.argv[2]])
    Path(sys.argv[2] + ".go").touch()
    await anyio.sleep(600)

anyio.run(main)
"""
"""A host of `Child` (gemwire's own start, the OS's tree and all) that never cleans up."""


async def test_a_host_killed_without_cleaning_up_leaves_nothing_running(tmp_path: Path) -> None:
    # Linux: the launcher sees its parent die; macOS: the watchdog does (kqueue), and stops
    # the tree (SIGTERM, its grace, SIGKILL); Windows: the job's one handle closes with
    # the host, and KILL_ON_JOB_CLOSE ends every process of the job.
    pids = tmp_path / "pids"
    with subprocess.Popen([sys.executable, "-c", HOST, PROGRAM, str(pids)]) as host:  # noqa: ASYNC220
        try:
            leader, descendant = await _pids_of(pids)
        finally:
            host.kill()  # SIGKILL; Windows: TerminateProcess
    assert [pid for pid in (leader, descendant) if alive(pid, settle=15)] == []


# --- Windows only: what the job adds ---------------------------------------------------


async def test_windows_closing_the_job_ends_everything_as_a_crash_of_gemwire_does() -> None:
    # Windows closes gemwire's handles however it exits: KILL_ON_JOB_CLOSE does the rest.
    world = FakeWindowsWorld()
    leader, descendants = await world.start(STUBBORN)
    world.tree.close()
    assert [world.alive(pid) for pid in [leader, *descendants]] == [False, False]
    assert [job.limit_flags for job in world.kernel.jobs.values()] == [
        JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
    ]


async def test_windows_a_child_gone_before_it_joined_its_job_leaves_no_job_open() -> None:
    # A CLI that exits at once (a bad flag) cannot join a job; that is no failure to start.
    world = FakeWindowsWorld()
    kernel = world.kernel
    pid = kernel.create_process(None, CREATE_NEW_PROCESS_GROUP, polite=False)
    kernel.processes[pid].status = 0
    world.tree.started(pid)
    assert [job.closed for job in kernel.jobs.values()] == [True]
    world.tree.kill()
    world.tree.kill_leftovers()
    world.tree.close()  # nothing left to close
    assert world.exit_status(pid) == 0


async def test_windows_a_child_that_cannot_join_a_job_is_still_killed() -> None:
    world = FakeWindowsWorld()
    world.kernel.refuse_jobs = True
    leader, _ = await world.start(STUBBORN)
    world.tree.terminate()
    world.tree.kill()
    assert (world.exit_status(leader), world.kernel.jobs[0x40].closed) == (-1, True)
    world.tree.close()


async def test_windows_the_graceful_stop_is_ctrl_break_to_the_childs_group_alone() -> None:
    world = FakeWindowsWorld()
    bystander = world.kernel.create_process(None, 0, polite=True)  # in gemwire's group
    leader, _ = await world.start(POLITE)
    world.tree.terminate()
    assert (world.exit_status(leader), world.alive(bystander)) == (0, True)
    world.tree.close()
