"""Agent processes shared by sessions: `AgentPool`.

ACP sessions carry their own ``cwd``, so one agent process can serve many sessions of the
same agent and environment. The pool keeps, per agent, the processes it started (each in
the first root, as spares are), each serving up to ``sessions_per_agent`` sessions
(``ServerConfig.sessions_per_agent``, 20 by default; 1 is a process a session). A process
ends once its last session has let it go.

Each session's permission requests go to that session's handler (by the ACP session id
the request names). Sessions share a process only with sessions of the same mode
(``mode`` at creation: the client puts each session it opens in it) and of the same
kind of answers: "allow everything" (preset ``all``, answered by the client's preset,
so gemwire need not make the agent ask) or anything else (the sessions' handlers, and
the agent made to ask: `gemwire.runners.acp.asking`). An agent that exits ends the sessions it served, each on its own
(their ``serve`` sees the client gone); a prompt continues each on a new process through
``session/resume`` or ``session/load``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

import anyio
import msgspec
from anyio.abc import TaskGroup

from gemwire.runners.acp import AcpClient, AcpOptions
from gemwire.runners.acp.permissions import PermissionHandler, PermissionRequest, choose_option
from gemwire.server.spares import SpareAgents

__all__ = ("AgentPool", "SharedAgent")


class SharedAgent:
    """One agent process and the sessions it serves."""

    def __init__(self, key: AcpOptions) -> None:
        self.key = key
        self.client: AcpClient | None = None
        self.handlers: dict[str, PermissionHandler] = {}
        """Each session's permission handler, by its ACP session id."""
        self.users = 0
        self.ready = anyio.Event()
        self.unused = anyio.Event()
        self.done = anyio.Event()
        """Its process has ended and its client closed."""
        self.failure: BaseException | None = None

    @property
    def running(self) -> bool:
        return self.client is not None and self.client.running

    async def answer(self, request: PermissionRequest) -> str | None:
        handler = self.handlers.get(request.session_id)
        if handler is None:  # a session that has gone: nobody to ask
            return choose_option(request.options, allow=False)
        return await handler(request)


class AgentPool:
    """See the module docstring."""

    def __init__(self, launcher: SpareAgents, sessions_per_agent: int, cwd: str) -> None:
        self._launcher = launcher
        self._per_agent = sessions_per_agent
        self._cwd = cwd
        self._agents: list[SharedAgent] = []

    @property
    def processes(self) -> int:
        return len(self._agents)

    @property
    def shares(self) -> bool:
        """A process may serve several sessions (``--sessions-per-agent`` over 1)."""
        return self._per_agent > 1

    @asynccontextmanager
    async def agent(
        self, name: str, cwd: str, tg: TaskGroup, *, mode: str | None, allow_all: bool
    ) -> AsyncGenerator[SharedAgent]:
        """A process of agent ``name`` for one session in ``cwd`` whose sessions are put
        in ``mode`` (`AcpOptions.mode`) and whose answers ``allow_all`` or not: one with
        room, else a new one started in ``tg``; let go on leaving. Raises what kept it
        from starting."""
        launched = self._launcher.options(name, cwd)
        options = msgspec.structs.replace(
            launched,
            # The session's own mode, else the one its agent is configured with.
            mode=launched.mode if mode is None else mode,
            # Sessions that allow everything are answered by the preset itself, which is
            # what the server's own answer would be: the client then knows it need not
            # make the agent ask (`asking`). Any other preset is the sessions' callback.
            permissions="all" if allow_all else "deny",
        )
        key = msgspec.structs.replace(options, cwd=self._cwd)
        shared = next(
            (
                a
                for a in self._agents
                if a.key == key
                and a.users < self._per_agent
                and not a.unused.is_set()
                and (a.running or not a.ready.is_set())
            ),
            None,
        )
        if shared is None:
            # A process a session keeps the session's own folder as its cwd, as before.
            started = options if self._per_agent == 1 else key
            shared = SharedAgent(key)
            self._agents.append(shared)
            tg.start_soon(self._run, shared, started)
        shared.users += 1
        try:
            await shared.ready.wait()
            if shared.failure is not None:
                raise shared.failure
            yield shared
        finally:
            shared.users -= 1
            if not shared.users:
                shared.unused.set()
                # The last session to leave waits for the process to end, as when a
                # session had a process of its own.
                with anyio.CancelScope(shield=True):
                    await shared.done.wait()

    async def _run(self, shared: SharedAgent, options: AcpOptions) -> None:
        try:
            channel = self._launcher.session_channel(options)
            handler = None if options.permissions == "all" else shared.answer
            async with AcpClient(options, channel=channel, permission_handler=handler) as client:
                shared.client = client
                shared.ready.set()
                await shared.unused.wait()
        except Exception as exc:  # noqa: BLE001 - said to the sessions waiting for it
            shared.failure = exc
        finally:
            self._agents.remove(shared)
            shared.ready.set()
            shared.done.set()
