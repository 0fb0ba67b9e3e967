"""Run a child process to completion in its own process group, and leave nothing behind.

Why a process group: the ``gemini`` launcher is a relauncher that ignores SIGTERM and
runs the real CLI as its child, which in turn runs shell tools as grandchildren. Only a
signal to the whole group reaches all of them.

Why our own, large pipes: Node queues whatever does not fit into a full pipe and
``process.exit()`` discards that queue. Gemini CLI 0.61.0 printing a 300 KB tool result
and then finishing quickly lost everything after the first 128 KiB of that line,
``result`` included, and still exited 0 (4 runs of 4 with the default 64 KiB pipe; 0 of 4
with a 1 MiB pipe). So stdout and stderr are pipes we create with `PIPE_CAPACITY`.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio
import msgspec
from anyio.abc import Process

from gemwire.errors import AgentNotFound

__all__ = ("ProcessOutput", "kill_process_group", "run_process")

TERMINATE_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL to the process group."""

PIPE_CAPACITY = 1 << 20
"""Bytes; Linux's default limit for unprivileged processes (``/proc/sys/fs/pipe-max-size``)."""


class ProcessOutput(msgspec.Struct, frozen=True, kw_only=True):
    """What a finished child left: its exit status and everything it wrote."""

    returncode: int
    """Exit status; negative for death by signal (``-9`` for SIGKILL), as subprocess does."""
    stdout: bytes
    stderr: bytes
    timed_out: bool
    duration: float


def kill_process_group(pgid: int, sig: signal.Signals) -> None:
    """Signal every process in the group; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, sig)


def _open_pipe() -> tuple[int, int]:
    """A pipe with `PIPE_CAPACITY` where the system allows it; (read end, write end)."""
    read_fd, write_fd = os.pipe()
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)  # Linux only
    if set_size is not None:
        with contextlib.suppress(OSError):  # capped lower by this system: keep the default
            fcntl.fcntl(write_fd, set_size, PIPE_CAPACITY)
    os.set_blocking(read_fd, False)
    return read_fd, write_fd


async def _drain(fd: int, into: bytearray) -> None:
    while True:
        await anyio.wait_readable(fd)
        try:
            data = os.read(fd, 1 << 16)
        except BlockingIOError:
            continue  # woken without data
        if not data:
            return
        into += data


async def _stop(process: Process) -> None:
    """TERM the group, give it a grace period, then KILL it."""
    kill_process_group(process.pid, signal.SIGTERM)
    with anyio.move_on_after(TERMINATE_GRACE):
        await process.wait()
        return
    kill_process_group(process.pid, signal.SIGKILL)
    await process.wait()


async def run_process(
    argv: Sequence[str],
    *,
    input: bytes = b"",
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,  # noqa: ASYNC109 - timing out is an outcome (timed_out)
) -> ProcessOutput:
    """Run ``argv`` with ``input`` on stdin (written at once, then closed).

    stdout and stderr are drained concurrently, so a chatty stderr cannot block the
    child. On timeout or cancellation the whole process group is stopped. After the child
    exits, anything it left running in its group (background shell commands) is killed.

    Raises `AgentNotFound` when ``argv[0]`` cannot be executed.
    """
    stdout, stderr = bytearray(), bytearray()
    started = time.monotonic()
    timed_out = False
    (out_read, out_write), (err_read, err_write) = _open_pipe(), _open_pipe()
    try:
        process = await anyio.open_process(
            list(argv),
            stdout=out_write,
            stderr=err_write,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
    except OSError as exc:
        for fd in (out_read, out_write, err_read, err_write):
            os.close(fd)
        raise AgentNotFound(
            f"cannot run {argv[0]}: {exc.strerror or exc}", executable=argv[0]
        ) from exc
    # Only the child may hold the write ends, or the drains would never see EOF.
    os.close(out_write)
    os.close(err_write)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_drain, out_read, stdout)
            tg.start_soon(_drain, err_read, stderr)
            if process.stdin is not None:
                try:
                    await process.stdin.send(input)
                    await process.stdin.aclose()
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass  # the child exited without reading its input; its output says why
            with anyio.move_on_after(timeout) as scope:
                await process.wait()
            if scope.cancelled_caught:
                timed_out = True
                with anyio.CancelScope(shield=True):
                    await _stop(process)
            # Leftover grandchildren would keep the pipes open and the drains waiting.
            kill_process_group(process.pid, signal.SIGKILL)
    finally:
        if process.returncode is None:
            with anyio.CancelScope(shield=True):
                await _stop(process)
        kill_process_group(process.pid, signal.SIGKILL)
        os.close(out_read)
        os.close(err_read)
        if process.stdin is not None:
            with anyio.CancelScope(shield=True):
                await process.stdin.aclose()
    assert process.returncode is not None
    return ProcessOutput(
        returncode=process.returncode,
        stdout=bytes(stdout),
        stderr=bytes(stderr),
        timed_out=timed_out,
        duration=time.monotonic() - started,
    )
