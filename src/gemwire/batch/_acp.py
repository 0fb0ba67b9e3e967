"""``acp`` mode: a few long-lived ACP agent processes, each serving many tasks' sessions.

One ``gemini --acp`` serving 20 sessions did 20 one-turn tasks in 2.9 s where 20 ``gemini -p``
processes took 30.5 s (BENCHMARKS.md). An agent is replaced when it dies (the tasks it took
with it end ``crashed``, which the batch retries) and recycled after ``sessions_per_agent``
sessions, once its running tasks are done. A task's timeout bounds its whole attempt: the
wait for an agent (and its start, ``initialize`` included), ``session/new`` and the turn.

Where the agent offers ``session/close``, each task's session is closed once the task is
done (Gemini CLI 0.61 does not: it keeps every session, and recycling bounds its memory).
A task tried again after a failure continues the session of its last attempt where the
agent offers ``session/resume`` (the work done so far stays in the agent's context), and
gets a new session where it does not, or where the agent cannot resume that session.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Self

import anyio
import msgspec
from anyio.abc import TaskGroup, TaskStatus

from gemwire.batch.results import Outcome
from gemwire.batch.tasks import Task
from gemwire.errors import (
    AgentCrashed,
    AgentRequestFailed,
    BatchOutputError,
    GemwireError,
    RunTimedOut,
)
from gemwire.events import Event, FileChanged, Notice, TokenUsage, TurnError
from gemwire.runners import GeminiOptions, find_gemini
from gemwire.runners.acp import (
    AcpClient,
    AcpOptions,
    AcpSession,
    PermissionHandler,
    PermissionPreset,
    PermissionRequest,
    permission_preset,
    turn_error,
)
from gemwire.runners.agents import AGENTS, agent_identity, resolve_agent

__all__ = ("AcpExecutor", "Connect", "gemini_acp_options")

Connect = Callable[[AcpOptions, PermissionHandler], AcpClient]
"""Makes the client of one agent process (by default, one that starts it)."""

_PERMISSIONS_FOR_APPROVAL: dict[str, PermissionPreset] = {
    "yolo": "all",
    "auto_edit": "edits",
    "plan": "reads",
    "default": "deny",
}
"""A task written for Gemini's approval modes means the same in ``acp`` mode."""


class _Failed(msgspec.Struct, frozen=True, kw_only=True):
    """A task that ended before its turn could start (no session)."""

    error: TurnError
    ok: bool = False
    answer: str = ""
    files_changed: list[FileChanged] = []
    usage: TokenUsage | None = None
    session_id: str | None = None


class _Agent:
    """One agent process: its client lives in a task of the pool's group until retired."""

    def __init__(self) -> None:
        self.client: AcpClient | None = None
        self.sessions = 0
        self.running = 0
        self.draining = False
        self._retire = anyio.Event()
        self.gone = anyio.Event()

    @property
    def usable(self) -> bool:
        client = self.client
        return client is not None and client.running and not self.draining

    async def serve(
        self, client: AcpClient, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        started = False
        try:
            async with client:
                self.client = client
                task_status.started()
                started = True
                await self._retire.wait()
        except (AgentCrashed, AgentRequestFailed, RunTimedOut):
            if not started:
                raise  # the task that wanted this agent fails (and may be retried)
            # The agent died: its tasks already ended ``crashed``; a new one takes over.
        finally:
            self.gone.set()

    def retire(self, *, now: bool = False) -> None:
        """Take no more sessions; stop the agent once its running tasks are done."""
        self.draining = True
        if now or self.running == 0:
            self._retire.set()


class _Pool:
    """The agent processes of one agent command."""

    def __init__(
        self, options: AcpOptions, per_agent: int, sessions_per_agent: int, connect: Connect
    ) -> None:
        self.options = options
        self._connect = connect
        self._per_agent = per_agent
        self._sessions_per_agent = sessions_per_agent
        self.agents: list[_Agent] = []
        self._starting = anyio.Lock()

    async def acquire(self, group: TaskGroup, handler: PermissionHandler) -> _Agent:
        async with self._starting:
            free = [a for a in self.agents if a.usable and a.running < self._per_agent]
            agent = min(free, key=lambda a: a.running) if free else None
            if agent is None:
                self.agents = [a for a in self.agents if not a.gone.is_set()]
                agent = _Agent()
                client = self._connect(self.options, handler)
                await group.start(agent.serve, client)
                self.agents.append(agent)
            agent.running += 1
            agent.sessions += 1
            if agent.sessions >= self._sessions_per_agent:
                agent.draining = True  # recycled once its running tasks are done
            return agent


class AcpExecutor:
    """Runs each task as a session of a long-lived agent process: the built-in agent the
    task names, else ``agent``, else ``options``' command (docs/agents.md); ``agents``
    processes of each at most. With ``gemini``, ``options`` is that Gemini CLI's (made by
    `gemini_acp_options`), found when first needed as ``process`` mode finds it.
    ``connect`` makes each agent's client (tests give one on an in-process agent)."""

    def __init__(
        self,
        options: AcpOptions,
        *,
        agent: str | None,
        agents: int,
        sessions_per_agent: int,
        concurrency: int,
        gemini: GeminiOptions | None = None,
        connect: Connect | None = None,
    ) -> None:
        self._options = options
        self._connect: Connect = connect or _start_agent
        self._unfinished: dict[str, str] = {}
        """A failed task's last session, by task id: its next attempt resumes it."""
        self._gemini = gemini
        self._default = agent
        self._per_agent = math.ceil(concurrency / agents)
        self._sessions_per_agent = sessions_per_agent
        self._pools: dict[str | None, _Pool] = {}
        self._handlers: dict[str, PermissionHandler] = {}
        self._group: TaskGroup | None = None

    def agent_of(self, task: Task) -> str:
        name = task.agent or self._default or ("gemini" if self._gemini else None)
        command = (AGENTS[name].executable,) if name in AGENTS else self._options.command
        return agent_identity(command)

    async def __aenter__(self) -> Self:
        self._group = await anyio.create_task_group().__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._group is not None
        for pool in self._pools.values():
            for agent in pool.agents:
                agent.retire(now=True)
        await self._group.__aexit__(None, None, None)

    async def run(self, task: Task, cwd: str, on_event: Callable[[Event], None]) -> Outcome:
        assert self._group is not None
        name = task.agent or self._default
        pool = self._pools.get(name) or self._pool(name)
        timeout = task.timeout or self._options.timeout
        deadline = _Deadline(timeout)
        agent: _Agent | None = None
        with anyio.move_on_at(deadline.at):
            try:
                agent = await pool.acquire(self._group, self._permission)
            except (AgentCrashed, AgentRequestFailed, RunTimedOut) as exc:
                return _Failed(error=_error_of(exc))  # not AgentNotFound: that ends the batch
        if agent is None:
            return _Failed(error=deadline.error("waiting for the agent to start"))
        try:
            outcome = await self._turn(agent, task, cwd, on_event, deadline)
        finally:
            agent.running -= 1
            if agent.draining or not agent.usable:
                agent.retire()
        if not outcome.ok and outcome.session_id:
            self._unfinished[task.id] = outcome.session_id
        return outcome

    def _pool(self, name: str | None) -> _Pool:
        options = self._options
        if name is None and self._gemini is not None:
            found = find_gemini(self._gemini.executable)
            options = msgspec.structs.replace(options, command=(found.path, "--acp"))
        if name is not None:
            resolved = resolve_agent(name)
            spec = AGENTS[resolved.name]
            options = msgspec.structs.replace(
                options,
                command=resolved.command,
                serve_reads=spec.serve_reads,
                env={**spec.env, **options.env},
            )
        pool = self._pools[name] = _Pool(
            options, self._per_agent, self._sessions_per_agent, self._connect
        )
        return pool

    async def _turn(
        self,
        agent: _Agent,
        task: Task,
        cwd: str,
        on_event: Callable[[Event], None],
        deadline: _Deadline,
    ) -> Outcome:
        assert agent.client is not None
        session: AcpSession | None = None
        with anyio.move_on_at(deadline.at):
            try:
                session = await self._open(agent.client, task, cwd, on_event)
            except GemwireError as exc:
                if not agent.client.running:
                    agent.retire()
                return _Failed(error=_error_of(exc))
        if session is None:
            return _Failed(error=deadline.error("opening a session"))
        self._handlers[session.session_id] = permission_preset(_permissions(task, self._options))
        try:
            for event in session.take_events():
                on_event(event)
            if task.model:
                with anyio.move_on_at(deadline.at) as setting:
                    await session.set_model(task.model)
                if setting.cancelled_caught:
                    error = deadline.error("setting the model")
                    return _Failed(error=error, session_id=session.session_id)
            return await self._prompt(session, task, on_event, deadline)
        except BatchOutputError:
            raise  # the batch's own output failed: that ends the batch, not the task
        except GemwireError as exc:
            return _Failed(error=_error_of(exc), session_id=session.session_id)
        finally:
            del self._handlers[session.session_id]
            await self._close(agent.client, session, on_event)

    async def _open(
        self, client: AcpClient, task: Task, cwd: str, on_event: Callable[[Event], None]
    ) -> AcpSession:
        """The task's session: its last attempt's, resumed where the agent offers it."""
        earlier = self._unfinished.pop(task.id, None)
        if earlier is not None and client.offers("session/resume"):
            try:
                return await client.resume_session(earlier, cwd=cwd)
            except AgentRequestFailed as exc:
                message = f"could not resume session {earlier} ({exc}); starting a new one"
                on_event(_notice(client, message))
        return await client.new_session(cwd=cwd)

    async def _close(
        self, client: AcpClient, session: AcpSession, on_event: Callable[[Event], None]
    ) -> None:
        """Free the task's session where the agent offers ``session/close`` (a failed
        task's next attempt can still resume it)."""
        if not (client.running and client.offers("session/close")):
            return
        try:
            await session.close()
        except GemwireError as exc:
            message = f"could not close session {session.session_id}: {exc}"
            on_event(_notice(client, message, session.session_id))

    async def _prompt(
        self,
        session: AcpSession,
        task: Task,
        on_event: Callable[[Event], None],
        deadline: _Deadline,
    ) -> Outcome:
        async with session.prompt(task.prompt) as turn:
            with anyio.move_on_at(deadline.at) as prompting:
                async for event in turn:
                    on_event(event)
            if not prompting.cancelled_caught:
                return turn.result
            await turn.cancel()
            async for event in turn:
                on_event(event)
        return msgspec.structs.replace(turn.result, ok=False, error=deadline.error())

    async def _permission(self, request: PermissionRequest) -> str | None:
        handler = self._handlers.get(request.session_id)
        if handler is None:
            return None
        return await handler(request)


def _notice(client: AcpClient, message: str, session_id: str | None = None) -> Notice:
    return Notice(
        agent=client.agent,
        session_id=session_id,
        severity="warning",
        message=message,
        source="gemwire",
    )


def _start_agent(options: AcpOptions, handler: PermissionHandler) -> AcpClient:
    return AcpClient(options, permission_handler=handler)


def _permissions(task: Task, options: AcpOptions) -> PermissionPreset:
    if task.permissions:
        return task.permissions
    if task.approval_mode:
        return _PERMISSIONS_FOR_APPROVAL[task.approval_mode]
    return options.permissions


class _Deadline:
    """When a task's attempt must be over: ``timeout`` seconds from now (none: never)."""

    def __init__(self, timeout: float | None) -> None:
        self._timeout = timeout
        self.at = anyio.current_time() + timeout if timeout else math.inf

    def error(self, during: str = "") -> TurnError:
        message = f"the task took longer than {self._timeout} s"
        return TurnError(kind="timeout", message=f"{message} ({during})" if during else message)


def _error_of(exc: GemwireError) -> TurnError:
    """The kind a failure outside a turn stands for: ACP failures as a turn types them
    (`turn_error`: a 429 is ``rate_limited``, so the batch retries it)."""
    if isinstance(exc, AgentCrashed | RunTimedOut | AgentRequestFailed):
        return turn_error(exc, exc.method if isinstance(exc, AgentRequestFailed) else "")
    return TurnError(kind=getattr(exc, "kind", "agent"), message=str(exc))


def gemini_acp_options(gemini: GeminiOptions) -> AcpOptions:
    """``gemini --acp`` run as ``gemini`` would be: its home, environment and timeout (the
    executable is found when the agent first starts, `AcpExecutor`'s ``gemini``)."""
    env = {**AGENTS["gemini"].env, **gemini.env}
    if gemini.gemini_home:
        env["GEMINI_CLI_HOME"] = gemini.gemini_home
    return AcpOptions(
        command=(gemini.executable or "gemini", "--acp"),
        env=env,
        inherit_env=gemini.inherit_env,
        permissions=_PERMISSIONS_FOR_APPROVAL[gemini.approval_mode or "default"],
        model=gemini.model,
        timeout=gemini.timeout,
    )
