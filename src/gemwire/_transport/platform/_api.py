"""The interfaces each OS implements: one small protocol per concern."""

from __future__ import annotations

from typing import Protocol, TypedDict

from anyio.abc import ByteReceiveStream

__all__ = ("Launcher", "OutputPipe", "PopenOptions", "ProcessTree")


class PopenOptions(TypedDict, total=False):
    """What `anyio.open_process` needs to start a child whose tree can be stopped."""

    start_new_session: bool
    creationflags: int


class ProcessTree(Protocol):
    """One child's process tree, kept together and stopped as well as this OS allows.

    The order of use: `popen_options` to start the child, `started` with its pid, then to
    stop it `terminate` (polite), `escalate` (a launcher's own stop), `kill`; after the
    child exited `kill_leftovers`; finally `close`, always. Every call after the tree is
    gone is harmless.
    """

    def popen_options(self) -> PopenOptions:
        """Keyword arguments for starting the child."""
        ...

    def started(self, pid: int) -> None:
        """The child runs as ``pid``: keep its tree together from now on."""
        ...

    def terminate(self) -> None:
        """Ask the child and its descendants to exit (SIGTERM; Ctrl-Break on Windows)."""
        ...

    def escalate(self) -> bool:
        """Tell a launcher in between to stop what it holds; False where there is none."""
        ...

    def kill(self) -> None:
        """End the child and every descendant now."""
        ...

    def kill_leftovers(self) -> None:
        """End what the exited child left running, never an unrelated process."""
        ...

    def close(self) -> None:
        """Release what holds the tree (Windows: the job, which ends what is left)."""
        ...


class OutputPipe(Protocol):
    """Where a child writes stdout or stderr, and how gemwire reads it."""

    child_end: int
    """What the child gets as the stream: a pipe's write end, or ``subprocess.PIPE``."""

    def started(self, stream: ByteReceiveStream | None) -> None:
        """The child runs (``stream``: its end of the pipe where the process owns it)."""
        ...

    async def read(self, size: int) -> bytes:
        """The next chunk, at most ``size`` bytes; ``b""`` at end of file."""
        ...

    def close(self) -> None:
        """Close gemwire's ends (idempotent)."""
        ...


class Launcher(Protocol):
    """A program in between that keeps the child's tree (the Linux subreaper)."""

    def argv(self) -> list[str]:
        """The launcher's own command, put before the child's."""
        ...

    def pass_fds(self) -> tuple[int, ...]:
        """Descriptors the launcher must inherit."""
        ...

    async def outcome(self) -> int:
        """After starting: 0, or the errno with which starting the program failed."""
        ...

    def close(self) -> None:
        """Close what the launcher was given (idempotent)."""
        ...
