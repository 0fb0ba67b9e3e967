"""Windows: each child in a Job Object that ends every process of the job when it closes.

``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`` gives the guarantee the Linux subreaper gives: the
job's only handle is gemwire's, and Windows closes it when gemwire exits, however it exits
(a crash, ``TerminateProcess``), so nothing the child started outlives gemwire. A child's
descendants join its job as they start (detaching from it needs a job that allows
breakaway, and ours does not). The child starts in a new process group
(``CREATE_NEW_PROCESS_GROUP``) so that a graceful stop is a ``CTRL_BREAK_EVENT`` to that
group alone, not to gemwire's console.

A child that cannot join its job (it exited already; or, before Windows 8, gemwire itself
runs in a job that forbids nesting) is stopped alone (``TerminateProcess``). The job is
created after the child started (``anyio.open_process`` cannot start it
suspended): what the child starts before `started` assigns it is not in the job. Node
takes far longer than that to start anything.

The system calls sit behind `JobApi` (ctypes on Windows, `kernel32_jobs`; a fake in the
tests here, and the real one in the CI workflow's Windows job). ctypes, not pywin32: six
kernel32 calls (``CreateJobObjectW``, ``SetInformationJobObject``, ``OpenProcess``,
``AssignProcessToJobObject``, ``TerminateJobObject``, ``CloseHandle``), and two more that
``os.kill`` makes (``GenerateConsoleCtrlEvent``, ``TerminateProcess``), do not earn a
runtime dependency with its own binary wheels per Python version.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping
from typing import Protocol

import anyio
from anyio.abc import ByteReceiveStream

from gemwire._transport.platform._api import Launcher, PopenOptions

__all__ = (
    "CREATE_NEW_PROCESS_GROUP",
    "CTRL_BREAK_EVENT",
    "JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE",
    "JobApi",
    "JobTree",
    "StreamPipe",
    "comspec",
    "kernel32_jobs",
    "launcher",
    "new_tree",
    "output_pipe",
    "shell_argv",
    "shell_command",
)

CREATE_NEW_PROCESS_GROUP = 0x00000200
"""``subprocess.CREATE_NEW_PROCESS_GROUP`` (named here: that name exists on Windows only)."""
CTRL_BREAK_EVENT = 1
"""``signal.CTRL_BREAK_EVENT``."""
JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x00002000
_KILLED = 1
"""The exit status of processes the job ends (as ``TerminateProcess`` leaves them)."""


class JobApi(Protocol):
    """The Windows calls a `JobTree` makes; handles are ints."""

    def create_job(self, limit_flags: int) -> int:
        """``CreateJobObjectW`` with ``LimitFlags`` set; the job's handle."""
        ...

    def assign(self, job: int, pid: int) -> None:
        """``AssignProcessToJobObject`` for the process ``pid``."""
        ...

    def terminate(self, job: int, exit_code: int) -> None:
        """``TerminateJobObject``: every process in the job ends with ``exit_code``."""
        ...

    def close(self, handle: int) -> None:
        """``CloseHandle``."""
        ...

    def ctrl_event(self, event: int, group: int) -> None:
        """``GenerateConsoleCtrlEvent`` to the process group ``group``."""
        ...

    def kill_process(self, pid: int) -> None:
        """``TerminateProcess``: the process ``pid`` alone."""
        ...


class JobTree:
    """A child's tree as a Job Object that kills on close, in a process group of its own."""

    def __init__(self, api: JobApi) -> None:
        self._api = api
        self._pid: int | None = None
        self._job: int | None = None

    def popen_options(self) -> PopenOptions:
        return {"creationflags": CREATE_NEW_PROCESS_GROUP}

    def started(self, pid: int) -> None:
        self._pid = pid
        job = self._api.create_job(JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE)
        try:
            self._api.assign(job, pid)
        except OSError:
            # It exited already (a terminated process cannot join a job): nothing of it
            # to hold; `kill` falls back to the process itself.
            self._api.close(job)
            return
        except BaseException:
            self._api.close(job)
            raise
        self._job = job

    def terminate(self) -> None:
        if self._pid is not None:
            # A group whose console is gone, or that exited: nothing to ask.
            with contextlib.suppress(OSError):
                self._api.ctrl_event(CTRL_BREAK_EVENT, self._pid)

    def escalate(self) -> bool:
        return False  # no launcher in between: the job is the kernel's

    def kill(self) -> None:
        if self._job is not None:
            self._api.terminate(self._job, _KILLED)
        elif self._pid is not None:
            with contextlib.suppress(OSError):  # gone, as it was when it would not join
                self._api.kill_process(self._pid)

    def kill_leftovers(self) -> None:
        # The job holds exactly the child's descendants, never a reused pid.
        if self._job is not None:
            self._api.terminate(self._job, _KILLED)

    def close(self) -> None:
        if self._job is not None:
            job, self._job = self._job, None
            self._api.close(job)  # KILL_ON_JOB_CLOSE: what is left ends here


class StreamPipe:
    """The process's own pipe (``subprocess.PIPE``), read through its stream."""

    child_end = -1
    """``subprocess.PIPE`` (not imported: only the runner layer's contracts may spawn)."""

    def __init__(self) -> None:
        self._stream: ByteReceiveStream | None = None

    def started(self, stream: ByteReceiveStream | None) -> None:
        self._stream = stream

    async def read(self, size: int) -> bytes:
        if self._stream is None:
            return b""
        try:
            return await self._stream.receive(size)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return b""

    def close(self) -> None:
        self._stream = None  # the process's own: `Child.aclose` closes it with the process


def output_pipe(capacity: int) -> StreamPipe:
    """The process's own pipe (``capacity``: Windows' pipes are drained as they fill)."""
    del capacity
    return StreamPipe()


def launcher() -> Launcher | None:
    """No launcher in between on Windows: the job is the kernel's."""
    return None


def comspec(environ: Mapping[str, str]) -> str:
    """The shell ``subprocess`` runs a command line in: ``%ComSpec%``, else ``cmd.exe`` in
    ``%SystemRoot%\\System32`` (never a bare ``cmd.exe``, which Windows would look for in
    the current folder first)."""
    found = environ.get("ComSpec") or environ.get("COMSPEC")
    if found:
        return found
    return "\\".join((environ.get("SystemRoot", "C:\\Windows"), "System32", "cmd.exe"))


def shell_argv(line: str) -> list[str]:
    """``%ComSpec% /c LINE``, as ``subprocess`` runs a shell command (`shell_command`)."""
    return [comspec(os.environ), "/c", line]


def shell_command(line: str) -> str:
    """The line itself: `anyio.open_process` starts a string as ``%ComSpec% /c "LINE"``,
    and ``cmd.exe`` takes what is between the first and the last quote as it is."""
    return line


def new_tree(marker: bytes) -> JobTree:
    """The tree of a child (``marker`` is unused: the job finds the descendants)."""
    del marker
    return JobTree(kernel32_jobs())


if sys.platform == "win32":
    import ctypes
    import signal
    from ctypes import wintypes

    _JOB_OBJECT_EXTENDED_LIMIT_INFORMATION = 9
    _PROCESS_SET_QUOTA = 0x0100
    _PROCESS_TERMINATE = 0x0001

    class _BasicLimits(ctypes.Structure):
        _fields_ = (
            ("PerProcessUserTimeLimit", ctypes.c_int64),
            ("PerJobUserTimeLimit", ctypes.c_int64),
            ("LimitFlags", wintypes.DWORD),
            ("MinimumWorkingSetSize", ctypes.c_size_t),
            ("MaximumWorkingSetSize", ctypes.c_size_t),
            ("ActiveProcessLimit", wintypes.DWORD),
            ("Affinity", ctypes.c_size_t),
            ("PriorityClass", wintypes.DWORD),
            ("SchedulingClass", wintypes.DWORD),
        )

    class _IoCounters(ctypes.Structure):
        _fields_ = tuple(
            (name, ctypes.c_uint64)
            for name in (
                "ReadOperationCount",
                "WriteOperationCount",
                "OtherOperationCount",
                "ReadTransferCount",
                "WriteTransferCount",
                "OtherTransferCount",
            )
        )

    class _ExtendedLimits(ctypes.Structure):
        _fields_ = (
            ("BasicLimitInformation", _BasicLimits),
            ("IoInfo", _IoCounters),
            ("ProcessMemoryLimit", ctypes.c_size_t),
            ("JobMemoryLimit", ctypes.c_size_t),
            ("PeakProcessMemoryUsed", ctypes.c_size_t),
            ("PeakJobMemoryUsed", ctypes.c_size_t),
        )

    class _Kernel32Jobs:
        def __init__(self) -> None:
            self._k = ctypes.WinDLL("kernel32", use_last_error=True)
            self._k.CreateJobObjectW.restype = wintypes.HANDLE
            self._k.OpenProcess.restype = wintypes.HANDLE

        def _check(self, ok: object) -> None:
            if not ok:
                raise ctypes.WinError(ctypes.get_last_error())

        def create_job(self, limit_flags: int) -> int:
            handle = self._k.CreateJobObjectW(None, None)
            self._check(handle)
            limits = _ExtendedLimits()
            limits.BasicLimitInformation.LimitFlags = limit_flags
            try:
                self._check(
                    self._k.SetInformationJobObject(
                        wintypes.HANDLE(handle),
                        _JOB_OBJECT_EXTENDED_LIMIT_INFORMATION,
                        ctypes.byref(limits),
                        ctypes.sizeof(limits),
                    )
                )
            except OSError:
                self.close(handle)
                raise
            return int(handle)

        def assign(self, job: int, pid: int) -> None:
            process = self._k.OpenProcess(_PROCESS_SET_QUOTA | _PROCESS_TERMINATE, False, pid)
            self._check(process)
            try:
                self._check(
                    self._k.AssignProcessToJobObject(wintypes.HANDLE(job), wintypes.HANDLE(process))
                )
            finally:
                self.close(process)

        def terminate(self, job: int, exit_code: int) -> None:
            self._k.TerminateJobObject(wintypes.HANDLE(job), exit_code)

        def close(self, handle: int) -> None:
            self._k.CloseHandle(wintypes.HANDLE(handle))

        def ctrl_event(self, event: int, group: int) -> None:
            os.kill(group, signal.CTRL_BREAK_EVENT if event == CTRL_BREAK_EVENT else event)

        def kill_process(self, pid: int) -> None:
            os.kill(pid, signal.SIGTERM)  # TerminateProcess on Windows

    def kernel32_jobs() -> JobApi:
        """The real `JobApi`: kernel32 through ctypes."""
        return _Kernel32Jobs()

else:

    def kernel32_jobs() -> JobApi:
        """The real `JobApi` exists on Windows only."""
        raise OSError("Job Objects exist on Windows only")
