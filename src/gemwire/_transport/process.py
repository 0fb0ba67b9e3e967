"""Child processes in their own process group, read through large pipes, never left behind.

Why a process group: the ``gemini`` launcher is a relauncher that ignores SIGTERM and
runs the real CLI as its child, which in turn runs shell tools as grandchildren. Only a
signal to the whole group reaches all of them.

Why descendants too: Gemini CLI starts each shell command in a session of its own, so a
signal to the CLI's group misses them, and once the CLI exits they belong to PID 1 — and
the CLI may still start one while it shuts down. So every child gets a unique
``GEMWIRE_RUN`` variable that its descendants inherit, and stopping signals the group,
every process carrying that tag, and every process of a snapshot of the tree taken
first (Linux ``/proc``; for descendants that cleared their environment).

Why our own, large pipes: Node queues whatever does not fit into a full pipe and
``process.exit()`` discards that queue. Gemini CLI 0.61.0 printing a 300 KB tool result
and then finishing quickly lost everything after the first 128 KiB of that line,
``result`` included, and still exited 0 (4 runs of 4 with the default 64 KiB pipe; 0 of 4
with a 1 MiB pipe). So stdout and stderr are pipes we create with `PIPE_CAPACITY`.

Why a launcher (Linux): a command that clears its environment and detaches (``env -i
setsid nohup sleep 600 &``) carries no tag and, once its parent is gone, is in no tree
either. So on Linux the child is started through `reaper` (a subreaper: such orphans
become its children, and it kills them all when the program exits, when it is told to,
or when gemwire itself dies).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import signal
import sys
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Self

import anyio
from anyio.abc import Process

from gemwire._transport import reaper
from gemwire._transport.reaper import proc_stat, process_tree
from gemwire.errors import AgentNotFound, GemwireError, InvalidOptions

__all__ = (
    "PIPE_CAPACITY",
    "Child",
    "kill_process_group",
    "process_tree",
    "spawn_error",
)

RUN_TAG = "GEMWIRE_RUN"
"""The environment variable that marks every process of one child's tree."""

TERMINATE_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL to the process group."""

PIPE_CAPACITY = 1 << 20
"""Bytes; Linux's default limit for unprivileged processes (``/proc/sys/fs/pipe-max-size``)."""

_READ_SIZE = 1 << 16

_REAPER = sys.platform == "linux" and bool(sys.executable) and os.path.isdir("/proc")
"""Whether children start through the subreaper launcher (`reaper`)."""

_PROGRAM_ERRORS = {errno.ENOENT, errno.EACCES, errno.ENOEXEC, errno.ENOTDIR, errno.ELOOP}


def kill_process_group(pgid: int, sig: signal.Signals) -> None:
    """Signal every process in the group; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, sig)


def tagged_processes(tag: str) -> dict[int, int]:
    """Live processes whose environment holds ``GEMWIRE_RUN=<tag>``, as pid -> start time."""
    marker = f"{RUN_TAG}={tag}".encode()
    found: dict[int, int] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if marker not in (entry / "environ").read_bytes().split(b"\0"):
                continue
        except OSError:
            continue  # gone, or not ours to read
        stat = proc_stat(int(entry.name))
        if stat is not None:
            found[int(entry.name)] = stat[1]
    return found


def _signal_all(processes: dict[int, int], sig: signal.Signals) -> None:
    for pid, start in processes.items():
        stat = proc_stat(pid)
        if stat is not None and stat[1] == start:  # still that process, not a reused pid
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)


def spawn_error(exc: OSError, program: str, cwd: Path | None) -> GemwireError:
    """What starting ``program`` in ``cwd`` failed on, as the error that says so."""
    if cwd is not None and (exc.filename == str(cwd) or not os.path.isdir(cwd)):
        if not os.path.exists(cwd):
            reason = "the folder does not exist"
        elif not os.path.isdir(cwd):
            reason = "it is not a folder"
        else:
            reason = f"the folder cannot be entered ({exc.strerror or exc})"
        return InvalidOptions(f"cannot run {program} in {cwd}: {reason}")
    if exc.errno in _PROGRAM_ERRORS:
        return AgentNotFound(f"cannot run {program}: {exc.strerror or exc}", executable=program)
    return GemwireError(f"cannot start {program}: {exc.strerror or exc}")


async def _read_status(fd: int) -> int:
    """The launcher's word on starting the program: 0, or the errno (a closed pipe: 0,
    and the exit status tells the rest)."""
    os.set_blocking(fd, False)
    data = b""
    try:
        while True:
            await anyio.wait_readable(fd)
            try:
                chunk = os.read(fd, 64)
            except BlockingIOError:
                continue
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    return int(data) if data.isdigit() else 0


def _open_pipe() -> tuple[int, int]:
    """A pipe with `PIPE_CAPACITY` where the system allows it; (read end, write end)."""
    read_fd, write_fd = os.pipe()
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)  # Linux only
    if set_size is not None:
        with contextlib.suppress(OSError):  # capped lower by this system: keep the default
            fcntl.fcntl(write_fd, set_size, PIPE_CAPACITY)
    os.set_blocking(read_fd, False)
    return read_fd, write_fd


class Child:
    """A running child: its stdout and stderr as byte chunks, and a way to stop it all.

    Start it with `spawn` and always `aclose` it (or use ``async with``): that stops the
    whole process group if it still runs, kills what it left behind, and closes the pipes.
    """

    def __init__(self, process: Process, stdout_fd: int, stderr_fd: int, tag: str) -> None:
        self._process = process
        self._fds = {"stdout": stdout_fd, "stderr": stderr_fd}
        self._tag = tag
        self.pid = process.pid

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Self:
        """Start ``argv`` in a new session (its own process group).

        Raises `AgentNotFound` when ``argv[0]`` cannot be executed, `InvalidOptions` when
        ``cwd`` is not a folder that can be entered (see `spawn_error`).
        """
        (out_read, out_write), (err_read, err_write) = _open_pipe(), _open_pipe()
        status_read, status_write = os.pipe() if _REAPER else (-1, -1)
        launcher = (
            [sys.executable, "-I", reaper.__file__, str(status_write), str(os.getpid())]
            if _REAPER
            else []
        )
        tag = uuid.uuid4().hex
        try:
            process = await anyio.open_process(
                [*launcher, *argv],
                stdout=out_write,
                stderr=err_write,
                cwd=cwd,
                env={**(os.environ if env is None else env), RUN_TAG: tag},
                start_new_session=True,
                pass_fds=(status_write,) if _REAPER else (),
            )
        except OSError as exc:
            for fd in (out_read, err_read, status_read, status_write):
                if fd >= 0:
                    os.close(fd)
            raise spawn_error(exc, argv[0], cwd) from exc
        finally:
            # Only the child may hold the write ends, or reading would never see EOF.
            os.close(out_write)
            os.close(err_write)
        child = cls(process, out_read, err_read, tag)
        if _REAPER:
            os.close(status_write)
            try:
                code = await _read_status(status_read)
            except BaseException:
                await child.aclose()
                raise
            if code:  # the launcher could not start the program, and has exited
                await child.aclose()
                failure = OSError(code, os.strerror(code), argv[0])
                raise spawn_error(failure, argv[0], cwd) from failure
        return child

    @property
    def returncode(self) -> int | None:
        """Exit status once reaped; negative for death by signal (``-9``: SIGKILL)."""
        return self._process.returncode

    async def send_input(self, data: bytes) -> None:
        """Write ``data`` to stdin, then close it (the child sees end of input)."""
        stdin = self._process.stdin
        if stdin is None:
            return
        try:
            await stdin.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the child exited without reading its input; its output says why
        finally:
            with anyio.CancelScope(shield=True):
                await stdin.aclose()

    async def write(self, data: bytes) -> None:
        """Write ``data`` to stdin and keep it open, for protocols that talk both ways.

        Raises ``anyio.BrokenResourceError`` once the child stopped reading (it exited).
        """
        stdin = self._process.stdin
        if stdin is None:
            raise anyio.ClosedResourceError
        await stdin.send(data)

    async def close_input(self) -> None:
        """Close stdin: the child sees end of input (a polite way to ask it to exit)."""
        stdin = self._process.stdin
        if stdin is not None:
            with (
                anyio.CancelScope(shield=True),
                contextlib.suppress(OSError, anyio.BrokenResourceError),
            ):
                await stdin.aclose()

    async def read(self, stream: str) -> bytes:
        """The next chunk of ``"stdout"`` or ``"stderr"``; ``b""`` at end of file."""
        fd = self._fds[stream]
        while True:
            await anyio.wait_readable(fd)
            try:
                return os.read(fd, _READ_SIZE)
            except BlockingIOError:
                continue  # woken without data

    async def wait(self) -> int:
        return await self._process.wait()

    async def stop(self) -> None:
        """TERM the group and every descendant, give them `TERMINATE_GRACE`, then KILL
        what is left; returns once the child is reaped."""
        with anyio.CancelScope(shield=True):
            if self._process.returncode is None:
                tree = process_tree(self.pid)  # before the CLI exits and orphans them
                kill_process_group(self.pid, signal.SIGTERM)
                _signal_all(tree | tagged_processes(self._tag), signal.SIGTERM)
                with anyio.move_on_after(TERMINATE_GRACE):
                    await self._process.wait()
                if _REAPER and self._process.returncode is None:
                    # The launcher kills what escaped and exits as the program did; a
                    # SIGKILL to the group first would orphan the escapees again.
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(self.pid, signal.SIGUSR1)
                    with anyio.move_on_after(TERMINATE_GRACE):
                        await self._process.wait()
                kill_process_group(self.pid, signal.SIGKILL)
                _signal_all(tree | tagged_processes(self._tag), signal.SIGKILL)
                await self._process.wait()

    def kill_leftovers(self) -> None:
        """Kill whatever the exited child left running (background shell commands).

        By the run's tag only: once the leader is reaped and its group is empty, its pid
        (and so the group id) may already belong to an unrelated process (pid_max can be
        as low as 32768)."""
        _signal_all(tagged_processes(self._tag), signal.SIGKILL)

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            await self.stop()
            self.kill_leftovers()
            for fd in self._fds.values():
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._fds.clear()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
