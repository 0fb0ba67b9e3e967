"""An agent process as an `AgentChannel`: its stdin and stdout, its stderr tail, its exit.

`AgentLaunch` is what only a process needs (the command, its environment, its folder);
`ProcessChannel` starts it through `_transport.Child` (its own process group, the
subreaper, large pipes: docs/running.md) and stops it with its whole tree.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Self

import anyio
import msgspec
from anyio.abc import TaskGroup

from gemwire._transport.process import Child
from gemwire._transport.stderr import StderrReader
from gemwire.runners.acp.channel import CLOSE_GRACE, Framing

__all__ = ("AgentLaunch", "ProcessChannel")


class AgentLaunch(msgspec.Struct, frozen=True, kw_only=True):
    """How to start an agent process: ``command`` in ``cwd`` (default: here) with ``env``
    added to this process's environment (unless ``inherit_env`` is false).

    >>> AgentLaunch(command=("agent",), env={"A": "1"}, inherit_env=False).environment()
    {'A': '1'}
    """

    command: tuple[str, ...]
    cwd: str | None = None
    env: dict[str, str] = {}
    inherit_env: bool = True

    def environment(self) -> dict[str, str]:
        """The agent's environment: this process's (unless ``inherit_env`` is false) and
        ``env``."""
        inherited: Mapping[str, str] = os.environ if self.inherit_env else {}
        return {**inherited, **self.env}


class ProcessChannel:
    """The agent process of ``launch``, started on ``async with``; ``secrets`` are masked
    in its stderr tail. Its diagnostics are the stderr tail and the exit status."""

    framing: Framing = "lines"

    def __init__(
        self, launch: AgentLaunch, *, secrets: Iterable[str] = (), grace: float = CLOSE_GRACE
    ) -> None:
        if not launch.command:
            raise ValueError("the launch command is empty: name the agent to run")
        self.launch = launch
        self._cwd = Path(os.path.realpath(launch.cwd or os.getcwd()))
        self._stderr = StderrReader(secrets=secrets)
        self._grace = grace
        self._exit_stack = contextlib.AsyncExitStack()

    @property
    def stderr_tail(self) -> str:
        return self._stderr.tail

    @property
    def exit_code(self) -> int | None:
        return self._child.returncode

    @property
    def close_reason(self) -> str | None:
        return None

    async def __aenter__(self) -> Self:
        launch = self.launch
        stack = self._exit_stack
        self._child = await stack.enter_async_context(
            await Child.spawn(launch.command, cwd=self._cwd, env=launch.environment())
        )
        try:
            tg: TaskGroup = await stack.enter_async_context(anyio.create_task_group())
        except BaseException:
            await stack.aclose()
            raise
        tg.start_soon(self._stderr.pump, lambda: self._child.read("stderr"))
        stack.callback(tg.cancel_scope.cancel)  # the pump, before the pipes close
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._exit_stack.aclose()

    async def send(self, data: bytes) -> None:
        # If the agent is gone, the reader sees the end of its output.
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await self._child.write(data)

    async def receive(self) -> bytes:
        data = await self._child.read("stdout")
        if not data:  # its output ended: it exits, or is about to
            with anyio.move_on_after(self._grace):
                await self._child.wait()
        return data

    async def close(self, grace: float) -> None:
        child = self._child
        await child.close_input()
        with anyio.move_on_after(grace):
            await child.wait()
        await child.stop()
        child.kill_leftovers()
