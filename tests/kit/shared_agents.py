"""One agent process serving case after case, for the agents' end-to-end tests (the
``agent_pool`` fixture, tests/e2e/conftest.py).

Starting a real agent (Node, its bundle, its config) costs more than most cases' turns, and
one ACP agent serves many sessions. A `SharedAgent` is one pinned agent started once, in a
home of its own, talking to one scripted model: each case gets a session of its own
(``session/new``) whose ``cwd`` is the case's own workspace, its own scenario on the model
(`ScriptedModel.play`) and its own permission preset, and reads exactly its session's
events. The agent runs on an event loop of its own in a thread (`SharedAgent.call`), so a
module's cases share it whatever loop each test runs on.

Cases that allow everything get an agent of their own kind: a client whose answers allow
everything does not make the agent ask (`gemwire.runners.acp.asking`), one that may deny
does, so the two never share a process. A case that needs a fresh process (a crash, a
kill, the next process resuming, another environment, what a process leaves behind) starts
its own, as before.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal

from gemwire.runners.acp import (
    AcpClient,
    AcpSession,
    PermissionHandler,
    PermissionPreset,
    PermissionRequest,
    permission_preset,
)
from gemwire.runners.agents import AgentName
from gemwire.testing import Scenario, ScriptedModel
from gemwire.testing.agents import IsolatedAgent, isolated_agent
from gemwire.testing.scenario import seed_workspace

T = TypeVar("T")


class SharedAgent:
    """One agent process, its isolated home under `root`, and the scripted model it talks
    to; `session` opens each case's session. ``asks``: whether its client may deny (and so
    makes the agent ask); its cases' presets are all ``all``, or none is."""

    def __init__(
        self,
        env: IsolatedAgent,
        model: ScriptedModel,
        portal: BlockingPortal,
        *,
        asks: bool,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.env = env
        self.model = model
        self.asks = asks
        self._portal = portal
        self._handlers: dict[str, PermissionHandler] = {}
        self.client = AcpClient(
            env.acp_options(permissions="deny" if asks else "all", env=env.environ(environ)),
            permission_handler=self._decide if asks else None,
        )

    @property
    def root(self) -> Path:
        return self.env.root

    def call(self, function: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run ``function(*args)`` on the agent's event loop and return its result."""
        return self._portal.call(function, *args)

    def play(self, scenario: Scenario, workspace: Path, files: Mapping[str, str]) -> None:
        """Set up a case: the model answers ``scenario``, ``workspace`` holds ``files``."""
        workspace.mkdir(parents=True, exist_ok=True)
        seed_workspace(workspace, files)
        self.model.play(scenario)

    async def session(self, workspace: Path, permissions: PermissionPreset) -> AcpSession:
        """A new session in ``workspace`` whose permission requests ``permissions`` answers
        (the client's handler looks each request's session up)."""
        assert self.asks == (permissions != "all"), (self.asks, permissions)
        session = await self.client.new_session(cwd=str(workspace))
        self._handlers[session.session_id] = permission_preset(permissions)
        return session

    async def _decide(self, request: PermissionRequest) -> str | None:
        return await self._handlers[request.session_id](request)


@contextmanager
def shared_agent(
    name: AgentName,
    root: Path,
    *,
    version: str | None = None,
    asks: bool = True,
    environ: Mapping[str, str] | None = None,
    command: tuple[str, ...] | None = None,
) -> Iterator[SharedAgent]:
    """Start agent ``name`` (pinned release ``version``, ``environ`` added to its
    environment; by ``command`` if given) once, under ``root``; on exit stop it and check
    nothing it started is left."""
    with ScriptedModel(Scenario(turns=[])) as model:
        env = isolated_agent(name, model, root=root, command=command, version=version)
        with start_blocking_portal() as portal:
            shared = SharedAgent(env, model, portal, asks=asks, environ=environ)
            with portal.wrap_async_context_manager(shared.client):
                yield shared
        assert env.live_processes() == []


class AgentPool:
    """The module's shared agents, by name, release and preset kind (`SharedAgent.asks`),
    started on first use. Asked for another agent or release, it stops those running
    first: a module's cases come grouped by agent (the order of their parameters), so each
    starts once, and one agent runs at a time (two processes of it at most)."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory, stack: ExitStack) -> None:
        self._factory = tmp_path_factory
        self._stack = stack
        self._agent: tuple[AgentName, str | None] | None = None
        self._running: dict[bool, SharedAgent] = {}
        self._stops = ExitStack()

    def get(
        self,
        name: AgentName,
        permissions: PermissionPreset,
        version: str | None = None,
        environ: Mapping[str, str] | None = None,
        *,
        command: tuple[str, ...] | None = None,
    ) -> SharedAgent:
        """The shared agent for a case of agent ``name`` (``version``) under preset
        ``permissions``; started with ``environ`` added (by ``command`` if given), if it is
        not running yet (a module asks for an agent with the same ``environ`` and
        ``command`` each time)."""
        if self._agent != (name, version):
            self._running.clear()
            self._stops.close()
            self._stops = self._stack.enter_context(ExitStack())
            self._agent = (name, version)
        asks = permissions != "all"
        if asks not in self._running:
            root = self._factory.mktemp(f"shared-{name}").resolve()
            agent = shared_agent(
                name, root, version=version, asks=asks, environ=environ, command=command
            )
            self._running[asks] = self._stops.enter_context(agent)
        return self._running[asks]
