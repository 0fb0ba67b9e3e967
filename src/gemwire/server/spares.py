"""Agents started ahead (`SpareAgents`): a new session on a warm agent starts at once.

An agent process takes about a second to start (Node, its modules, its settings), far
longer than a session on a running agent takes to open. ``gemwire serve --warm gemini``
keeps one agent of each named kind started and waiting; a new session of that agent is
handed the waiting process and the next one starts behind it. A spare costs what an idle
agent costs (for Gemini CLI about 150 MiB), which is why it is asked for by name.

A spare is started in the first root, and an ACP agent is told its session's folder in
``session/new``, so it works in the session's own workspace; only the process's working
folder is the root. A spare that ends while it waits is never handed out; its agent is
taken to be broken, said in the log, and not started ahead again.

`SpareAgents` wraps the launcher the server was given (an `AgentLauncher` itself) and is
entered for the server's life: its task group holds the spares, and leaving it stops them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Self

import anyio
import msgspec
from anyio.abc import TaskGroup, TaskStatus

from gemwire.runners.acp import AcpOptions, AgentChannel
from gemwire.runners.acp.channel import Framing
from gemwire.server.agents import AgentEntry, AgentLauncher

__all__ = ("SpareAgents",)

logger = logging.getLogger("gemwire.server")


class _Spare:
    """A started agent waiting for a session; ``released`` once its session let it go."""

    def __init__(self, options: AcpOptions, channel: AgentChannel) -> None:
        self.options = options
        self.channel = channel
        self.early: list[bytes] = []
        """What it said before its session took it, for the session to read first."""
        self.ended = False
        self.taken = anyio.Event()
        self.watched = anyio.Event()
        """Set once nothing but its session reads it."""
        self.released = anyio.Event()
        self.closed = anyio.Event()


class _Handed:
    """The channel a session gets for a spare: already open; leaving it stops the agent
    (in the task that started it, as anyio wants) and waits until it has."""

    def __init__(self, spare: _Spare) -> None:
        self._spare = spare
        self._channel = spare.channel

    @property
    def framing(self) -> Framing:
        return self._channel.framing

    @property
    def stderr_tail(self) -> str | None:
        return self._channel.stderr_tail

    @property
    def exit_code(self) -> int | None:
        return self._channel.exit_code

    @property
    def close_reason(self) -> str | None:
        return self._channel.close_reason

    async def send(self, data: bytes) -> None:
        await self._channel.send(data)

    async def receive(self) -> bytes:
        await self._spare.watched.wait()
        if self._spare.early:
            return self._spare.early.pop(0)
        return await self._channel.receive()

    async def close(self, grace: float) -> None:
        await self._channel.close(grace)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._spare.released.set()
        with anyio.CancelScope(shield=True):
            await self._spare.closed.wait()


class SpareAgents:
    """``launcher``, with one agent of each of ``warm`` started ahead in ``cwd``."""

    def __init__(self, launcher: AgentLauncher, warm: Sequence[str], cwd: str) -> None:
        self._launcher = launcher
        self._warm = tuple(dict.fromkeys(warm))
        self._cwd = cwd
        self._ready: dict[str, _Spare] = {}
        self._tg: TaskGroup | None = None

    def agents(self) -> list[AgentEntry]:
        return self._launcher.agents()

    def options(self, name: str, cwd: str) -> AcpOptions:
        return self._launcher.options(name, cwd)

    def channel(self, options: AcpOptions) -> AgentChannel:
        for name, spare in self._ready.items():
            if msgspec.structs.replace(options, cwd=self._cwd) == spare.options:
                del self._ready[name]
                spare.taken.set()
                return _Handed(spare)
        return self._launcher.channel(options)

    async def __aenter__(self) -> Self:
        self._tg = await anyio.create_task_group().__aenter__()
        for name in self._warm:
            self._tg.start_soon(self._keep, name)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._tg is not None
        self._tg.cancel_scope.cancel()
        await self._tg.__aexit__(None, None, None)

    async def _keep(self, name: str) -> None:
        """Keeps one spare of ``name`` waiting: the next starts when one is taken."""
        assert self._tg is not None
        while True:
            try:
                spare: _Spare = await self._tg.start(self._hold, name)
            except Exception as exc:  # noqa: BLE001 - its sessions start it themselves, and say why
                logger.warning("gemwire serve: no spare %s agent: %s", name, exc)
                return
            await spare.taken.wait()
            if spare.ended:
                return

    async def _hold(self, name: str, *, task_status: TaskStatus[_Spare]) -> None:
        """Starts a spare and holds it (open) until its session releases it; one that ends
        while it waits is no spare (the agent is broken: said once, and not restarted)."""
        options = self._launcher.options(name, self._cwd)
        spare = _Spare(options, self._launcher.channel(options))
        try:
            async with spare.channel:
                self._ready[name] = spare
                task_status.started(spare)
                async with anyio.create_task_group() as watching:
                    watching.start_soon(self._watch, name, spare)
                    await spare.taken.wait()
                    watching.cancel_scope.cancel()
                spare.watched.set()
                await spare.released.wait()
        finally:
            if self._ready.get(name) is spare:
                del self._ready[name]
            spare.closed.set()

    async def _watch(self, name: str, spare: _Spare) -> None:
        """Reads what the spare says before its session does (kept for the session), to
        see it end."""
        while data := await spare.channel.receive():
            spare.early.append(data)
        del self._ready[name]
        spare.ended = True
        spare.taken.set()
        spare.released.set()
        logger.warning(
            "gemwire serve: the spare %s agent ended before a session used it: %s",
            name,
            spare.channel.stderr_tail or f"exit code {spare.channel.exit_code}",
        )
