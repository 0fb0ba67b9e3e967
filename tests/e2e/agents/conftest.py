"""Shared by the agents' end-to-end tests: one agent process serving case after case.

Starting a real agent (Node, its bundle, its config) costs more than most cases' turns, and
one ACP agent serves many sessions. A `SharedAgent` is one pinned agent started once, in a
home of its own, talking to one scripted model: each case gets a session of its own
(``session/new``) whose ``cwd`` is the case's own workspace, its own scenario on the model
(`ScriptedModel.play`) and its own permission preset, and reads exactly its session's
events. The agent runs on an event loop of its own in a thread (`SharedAgent.call`), so a
module's cases share it whatever loop each test runs on.

A case that needs a fresh process (a crash, a kill, the next process resuming, another
environment, what a process leaves behind) starts its own, as before.
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
    """One agent process, its isolated home under ``root``, and the scripted model it
    talks to; `session` opens each case's session."""

    def __init__(
        self, env: IsolatedAgent, model: ScriptedModel, client: AcpClient, portal: BlockingPortal
    ) -> None:
        self.env = env
        self.model = model
        self.client = client
        self._portal = portal
        self._handlers: dict[str, PermissionHandler] = {}

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
        session = await self.client.new_session(cwd=str(workspace))
        self._handlers[session.session_id] = permission_preset(permissions)
        return session

    async def _decide(self, request: PermissionRequest) -> str | None:
        return await self._handlers[request.session_id](request)


@contextmanager
def shared_agent(
    name: AgentName, root: Path, *, version: str | None = None
) -> Iterator[SharedAgent]:
    """Start agent ``name`` (pinned release ``version``) once, under ``root``; on exit stop
    it and check nothing it started is left."""
    with ScriptedModel(Scenario(turns=[])) as model:
        env = isolated_agent(name, model, root=root, version=version)
        with start_blocking_portal() as portal:
            shared: SharedAgent | None = None

            async def decide(request: PermissionRequest) -> str | None:
                assert shared is not None
                return await shared._decide(request)

            client = AcpClient(env.acp_options(), permission_handler=decide)
            with portal.wrap_async_context_manager(client):
                shared = SharedAgent(env, model, client, portal)
                yield shared
        assert env.live_processes() == []


@pytest.fixture(scope="module")
def agent_pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AgentPool]:
    """The module's shared agents (`AgentPool`), stopped after its last case."""
    with ExitStack() as stack:
        yield AgentPool(tmp_path_factory, stack)


class AgentPool:
    """The module's shared agent, by name and release, started on first use. Asked for
    another, it stops the one running first: a module's cases come grouped by agent (the
    order of their parameters), so each agent starts once, and one runs at a time."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory, stack: ExitStack) -> None:
        self._factory = tmp_path_factory
        self._stack = stack
        self._running: tuple[tuple[AgentName, str | None], ExitStack, SharedAgent] | None = None

    def get(self, name: AgentName, version: str | None = None) -> SharedAgent:
        if self._running is not None:
            key, stack, agent = self._running
            if key == (name, version):
                return agent
            self._running = None
            stack.close()
        stack = self._stack.enter_context(ExitStack())
        root = self._factory.mktemp(f"shared-{name}").resolve()
        agent = stack.enter_context(shared_agent(name, root, version=version))
        self._running = ((name, version), stack, agent)
        return agent
