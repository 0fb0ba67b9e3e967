"""Child processes in their own process group, read through large pipes, never left behind.

Why a process group: the ``gemini`` launcher is a relauncher that ignores SIGTERM and
runs the real CLI as its child, which in turn runs shell tools as grandchildren. Only a
signal to the whole group reaches all of them.

Why descendants too: Gemini CLI starts each shell command in a session of its own, so a
signal to the CLI's group misses them, and once the CLI exits they belong to PID 1 — and
the CLI may still start one while it shuts down. So every child gets a unique
``GEMWIRE_RUN`` variable that its descendants inherit, and stopping signals the group,
every process carrying that tag, and every process of a snapshot of the tree taken
first (for descendants that cleared their environment). How is the OS's part
(`gemwire._transport.platform`): on Windows the tree is a Job Object instead.

Why our own, large pipes: Node queues whatever does not fit into a full pipe and
``process.exit()`` discards that queue. Gemini CLI 0.61.0 printing a 300 KB tool result
and then finishing quickly lost everything after the first 128 KiB of that line,
``result`` included, and still exited 0 (4 runs of 4 with the default 64 KiB pipe; 0 of 4
with a 1 MiB pipe). So stdout and stderr are pipes we create with `PIPE_CAPACITY`
(Windows: the process's own pipes, read as they fill; its event loop cannot wait on ours.
Those, like stdin, are closed by `Child.aclose` through the process: they do not close with
it).

Why a launcher (Linux): a command that clears its environment and detaches (``env -i
setsid nohup sleep 600 &``) carries no tag and, once its parent is gone, is in no tree
either. So on Linux the child is started through `reaper` (a subreaper: such orphans
become its children, and it kills them all when the program exits, when it is told to,
or when gemwire itself dies).
"""

from __future__ import annotations

import contextlib
import errno
import os
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Self

import anyio
from anyio.abc import Process

from gemwire._transport import platform
from gemwire._transport.platform import ProcessTree
from gemwire.errors import AgentNotFound, GemwireError, InvalidOptions

__all__ = ("PIPE_CAPACITY", "Child", "spawn_error")

RUN_TAG = "GEMWIRE_RUN"
"""The environment variable that marks every process of one child's tree."""

TERMINATE_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL to the process group."""

PIPE_CAPACITY = 1 << 20
"""Bytes; Linux's default limit for unprivileged processes (``/proc/sys/fs/pipe-max-size``)."""

_READ_SIZE = 1 << 16

_PROGRAM_ERRORS = {errno.ENOENT, errno.EACCES, errno.ENOEXEC, errno.ENOTDIR, errno.ELOOP}
_READER_GONE = (BrokenPipeError, ConnectionResetError)
"""What writing to a pipe whose reader is gone raises where anyio passes it on as it is:
Windows' pipes (``ERROR_NO_DATA``, ``ERROR_BROKEN_PIPE``) before asyncio's transport
counts itself closed. anyio's own `BrokenResourceError` is what the same is elsewhere."""


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


class Child:
    """A running child: its stdout and stderr as byte chunks, and a way to stop it all.

    Start it with `spawn` and always `aclose` it (or use ``async with``): that stops the
    whole process group if it still runs, kills what it left behind, and closes the pipes.
    """

    def __init__(
        self,
        process: Process,
        outputs: Mapping[str, platform.OutputPipe],
        tree: ProcessTree,
    ) -> None:
        self._process = process
        self._outputs = outputs
        self._tree = tree
        self.pid = process.pid

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str] | str,
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        output_pipe: Callable[[int], platform.OutputPipe] = platform.output_pipe,
    ) -> Self:
        """Start ``argv`` in a new session (its own process group; on Windows, a job); a
        string is a command line for the system shell (`platform.shell_argv`), as for
        `anyio.open_process`.

        ``output_pipe`` makes stdout's and stderr's pipes (this OS's kind by default).
        Raises `AgentNotFound` when the program cannot be executed, `InvalidOptions` when
        ``cwd`` is not a folder that can be entered (see `spawn_error`).
        """
        if isinstance(argv, str):
            program, command = platform.shell_argv(argv)[0], platform.shell_command(argv)
        else:
            program, command = argv[0], argv
        outputs: dict[str, platform.OutputPipe] = {
            "stdout": output_pipe(PIPE_CAPACITY),
            "stderr": output_pipe(PIPE_CAPACITY),
        }
        launcher = platform.launcher()
        if launcher and not isinstance(command, str):
            command = [*launcher.argv(), *command]
        tag = uuid.uuid4().hex
        tree = platform.new_tree(f"{RUN_TAG}={tag}".encode())
        try:
            process = await anyio.open_process(
                command,
                stdout=outputs["stdout"].child_end,
                stderr=outputs["stderr"].child_end,
                cwd=cwd,
                env={**(os.environ if env is None else env), RUN_TAG: tag},
                pass_fds=launcher.pass_fds() if launcher else (),
                **tree.popen_options(),
            )
        except OSError as exc:
            for output in outputs.values():
                output.close()
            if launcher:
                launcher.close()
            raise spawn_error(exc, program, cwd) from exc
        outputs["stdout"].started(process.stdout)
        outputs["stderr"].started(process.stderr)
        child = cls(process, outputs, tree)
        try:
            tree.started(process.pid)
            code = await launcher.outcome() if launcher else 0
        except BaseException:
            if launcher:
                launcher.close()
            await child.aclose()
            raise
        if code:  # the launcher could not start the program, and has exited
            await child.aclose()
            failure = OSError(code, os.strerror(code), program)
            raise spawn_error(failure, program, cwd) from failure
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
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, *_READER_GONE):
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
        try:
            await stdin.send(data)
        except _READER_GONE as exc:
            raise anyio.BrokenResourceError from exc

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
        return await self._outputs[stream].read(_READ_SIZE)

    async def wait(self) -> int:
        return await self._process.wait()

    async def stop(self) -> None:
        """Ask the child and every descendant to exit, give them `TERMINATE_GRACE`, then
        kill what is left; returns once the child is reaped."""
        with anyio.CancelScope(shield=True):
            if self._process.returncode is None:
                self._tree.terminate()
                with anyio.move_on_after(TERMINATE_GRACE):
                    await self._process.wait()
                if self._running() and self._tree.escalate():
                    with anyio.move_on_after(TERMINATE_GRACE):
                        await self._process.wait()
                self._tree.kill()
                await self._process.wait()

    def _running(self) -> bool:
        return self._process.returncode is None

    def kill_leftovers(self) -> None:
        """Kill whatever the exited child left running (background shell commands)."""
        self._tree.kill_leftovers()

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            await self.stop()
            self.kill_leftovers()
            self._tree.close()
            # The process's own pipes (stdin; stdout and stderr on Windows) close here:
            # a pipe transport closes by itself only once it reads end of file, and it
            # stops reading while what it read waits unread (a run cut short).
            await self._process.aclose()
            for output in self._outputs.values():
                output.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
