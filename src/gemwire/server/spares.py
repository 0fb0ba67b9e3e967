"""Agents started ahead (`SpareAgents`): a new session on a warm agent starts at once.

An agent process takes about a second to start (Node, its modules, its settings), and a
fresh Gemini CLI then takes 150-300 ms to answer its first ``initialize`` and 60-100 ms to
open a session: together far longer than the rest of a session's first answer. ``gemwire
serve --warm gemini`` keeps one agent of each named kind started, primed and waiting; a new
session of that agent is handed the waiting process. The next one starts once that session
has its first answer (anything the agent says after its first prompt), has ended, or
another session of that agent found no spare: starting an agent takes a core for a second,
which on a small machine slowed the first prompt by a third (BENCHMARKS.md). A spare
costs what an idle agent with one open session costs (Gemini CLI 0.61.0: about 225 MiB in
its two processes, 15 MiB of it the session), which is why it is asked for by name.

Priming: once started, a spare is sent the ``initialize`` a session's `AcpClient` sends
(`initialize_request`, with its request id: the same bytes), then the ``session/new`` that
client sends for the server's first root, the folder of a session that names none
(`session_params`; a folder every server has, and one that does not go away, as the last
session's might). Their answers are kept, with everything the agent says meanwhile and
after. The channel a session gets (`spare.Handed`) answers the client's own ``initialize``
from what was kept when its bytes are the ones sent ahead, and its ``session/new`` the
same way; the agent's other messages reach the client in the order the agent sent them.
Any other request goes to the agent: a session in another folder, or one that continues a
saved session, still skips ``initialize``, and the session opened ahead stays unused in
that agent (closed, where the agent offers ``session/close``), none of its messages
reaching the client.

Who gets a primed spare is decided when it is handed out (`SpareAgents.session_channel`):
a session's client, whose ``initialize`` is the one sent ahead. Any other client (the ACP
endpoint's, whose ``initialize`` is its own) gets a new agent.

A spare is started in the first root (the process's working folder); an ACP agent is told
its session's folder in ``session/new``. A session that comes while the spare is still
being started or primed gets a new agent. A spare that ends while it waits, or whose
priming fails (an error answer, no answer within ``request_timeout``, the agent's end), is
never handed out; its agent is taken to be broken, said in the log, and not started ahead
again.

`SpareAgents` wraps the launcher the server was given (an `AgentLauncher` itself) and is
entered for the server's life: its task group holds the spares, and leaving it stops them.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from typing import Self

import anyio
import msgspec
from anyio import AsyncContextManagerMixin
from anyio.abc import TaskGroup, TaskStatus

from gemwire.runners.acp import AcpOptions, AgentChannel
from gemwire.runners.acp.channel import CLOSE_GRACE
from gemwire.server.agents import AgentEntry, AgentLauncher
from gemwire.server.spare import Handed, Spare, client_initialize, why_ended

__all__ = ("SpareAgents",)

logger = logging.getLogger("gemwire.server")


class SpareAgents(AsyncContextManagerMixin):
    """``launcher``, with one agent of each of ``warm`` started and primed ahead in
    ``cwd`` (the server's first root)."""

    def __init__(self, launcher: AgentLauncher, warm: Sequence[str], cwd: str) -> None:
        self._launcher = launcher
        self._warm = tuple(dict.fromkeys(warm))
        self._cwd = cwd
        self._ready: dict[str, Spare] = {}
        self._taken: dict[str, Spare] = {}
        """Spares handed out whose next has not started yet."""
        self._tg: TaskGroup | None = None

    def agents(self) -> list[AgentEntry]:
        return self._launcher.agents()

    def options(self, name: str, cwd: str) -> AcpOptions:
        return self._launcher.options(name, cwd)

    def channel(self, options: AcpOptions) -> AgentChannel:
        """A new agent: for a client other than a session's (the ACP endpoint's), whose
        ``initialize`` is its own, where a spare has had a session's already."""
        return self._launcher.channel(options)

    def session_channel(self, options: AcpOptions) -> AgentChannel:
        """The channel of a session's client, ``AcpClient(options, channel=...)`` without
        a terminal policy or an elicitation handler: a spare of the same agent (its
        folder aside) primed with the ``initialize`` that client sends, else a new agent."""
        initialize = client_initialize(options)
        kind = _started(options, self._cwd)
        for name, spare in self._ready.items():
            if kind == _started(spare.options, self._cwd) and spare.initialize == initialize:
                del self._ready[name]
                spare.handed = True
                spare.taken.set()
                return Handed(spare)
        for spare in self._taken.values():
            if kind == _started(spare.options, self._cwd):  # the next spare waits no longer
                spare.answered.set()
        return self._launcher.channel(options)

    @asynccontextmanager
    async def __asynccontextmanager__(self) -> AsyncGenerator[Self]:
        async with anyio.create_task_group() as self._tg:
            for name in self._warm:
                self._tg.start_soon(self._keep, name)
            try:
                yield self
            finally:
                self._tg.cancel_scope.cancel()

    async def _keep(self, name: str) -> None:
        """Keeps one spare of ``name`` waiting: the next starts once the one taken is
        `Spare.answered`."""
        assert self._tg is not None
        while True:
            try:
                spare: Spare = await self._tg.start(self._hold, name)
            except Exception as exc:  # noqa: BLE001 - its sessions start it themselves, and say why
                logger.warning("gemwire serve: no spare %s agent: %s", name, exc)
                return
            await spare.taken.wait()
            if spare.ended:
                return
            self._taken[name] = spare
            await spare.answered.wait()
            del self._taken[name]

    async def _hold(self, name: str, *, task_status: TaskStatus[Spare]) -> None:
        """Starts a spare, primes it and holds it (open) until its session releases it;
        one that ends while it waits is no spare (the agent is broken: said once, and not
        restarted)."""
        options = self._launcher.options(name, self._cwd)
        spare = Spare(options, self._launcher.channel(options))
        try:
            async with spare.channel:
                try:
                    await spare.prime()
                    self._ready[name] = spare
                    task_status.started(spare)
                    async with anyio.create_task_group() as watching:
                        watching.start_soon(self._watch, name, spare)
                        await spare.taken.wait()
                        watching.cancel_scope.cancel()
                    spare.watched.set()
                    await spare.released.wait()
                finally:
                    if not spare.handed:  # else its session's client closed it
                        with anyio.CancelScope(shield=True):
                            await spare.channel.close(CLOSE_GRACE)
        finally:
            if self._ready.get(name) is spare:
                del self._ready[name]
            spare.closed.set()

    async def _watch(self, name: str, spare: Spare) -> None:
        """Reads what the spare says before its session does (kept for the session), to
        see it end."""
        while data := await spare.channel.receive():
            spare.said.append(data)
        del self._ready[name]
        spare.ended = True
        spare.taken.set()
        spare.released.set()
        logger.warning(
            "gemwire serve: the spare %s agent ended before a session used it: %s",
            name,
            why_ended(spare.channel),
        )


def _started(options: AcpOptions, cwd: str) -> AcpOptions:
    """What a spare's process and priming depend on: not the folder (the session's own is
    sent in ``session/new``), nor the mode its client puts the session in, nor how its
    client answers permissions (both the client's, after priming)."""
    return msgspec.structs.replace(options, cwd=cwd, mode=None, permissions="deny")
