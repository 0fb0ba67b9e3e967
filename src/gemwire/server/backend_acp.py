"""The `SessionBackend` of ACP sessions: an agent process kept between turns, the session's
own or shared with other sessions of its agent (`agent_pool`, ``--sessions-per-agent``).

Each session runs in one task (`AcpBackend._run_agent`) that holds its place on a process
of the pool and a task group for its turn and for the events that come between turns. It
stops when the session is deleted, when it has been idle for ``idle_timeout`` (status
``stopped``), when its agent exits, or when the server shuts down; a prompt, or a settings
request, continues a stopped session (``session/resume``, else ``session/load``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import anyio
from anyio.abc import TaskGroup

from gemwire.errors import AgentRequestFailed, GemwireError
from gemwire.runners.acp import AcpClient, AcpSession, AcpTurn
from gemwire.server.agent_pool import AgentPool, SharedAgent
from gemwire.server.backend import SessionHost, agent_call, agent_failure
from gemwire.server.live_session import LiveSession
from gemwire.server.responses import BadRequest, Conflict
from gemwire.server.spares import SpareAgents
from gemwire.wire import acp

__all__ = ("AcpBackend",)

logger = logging.getLogger("gemwire.server")


class AcpBackend:
    """See the module docstring."""

    def __init__(self, host: SessionHost, launcher: SpareAgents) -> None:
        self.host = host
        self.launcher = launcher
        self.pool = AgentPool(launcher, host.config.sessions_per_agent, host.config.roots[0])

    async def cancel(self, session: LiveSession) -> None:
        if session.state.cancel() and session.acp is not None:
            await session.acp.cancel()
        # else asked already (or the session is stopping: its turn is cancelled)

    async def stop(self, session: LiveSession, reason: str) -> None:
        if session.live:
            session.state.handle("stop", reason)
            session.wake()
            await session.agent_done.wait()

    def runs_agent(self, session: LiveSession) -> bool:
        return session.live

    async def start(self, session: LiveSession, how: str, *, load: bool) -> None:
        """Start the session's agent (``how``: its state's ``start``, or ``continue`` for
        a prompt; ``load``: continue the agent's session); returns once the session is
        ready, raising what kept it from starting. The caller holds a `reserve`."""
        session.check_in_service()
        cwd = self.host.confined(session)
        session.state.handle("continue" if how == "continue" else "start")
        session.agent_done = anyio.Event()
        session.stream.reopen()
        started = anyio.Event()
        failure: list[BaseException] = []
        self.host.tg.start_soon(self._run_agent, session, cwd, load, started, failure)
        await started.wait()
        if failure:
            raise agent_failure(failure[0]) from failure[0]

    async def _run_agent(
        self,
        session: LiveSession,
        cwd: str,
        load: bool,
        started: anyio.Event,
        failure: list[BaseException],
    ) -> None:
        record = session.record
        detail = "the agent exited"
        try:
            async with self.pool.agent(
                record.agent,
                cwd,
                self.host.tg,
                mode=record.mode,
                allow_all=record.permissions == "all",
            ) as shared:
                client = session.client = shared.client
                assert client is not None
                try:
                    detail = await self._serve(session, shared, cwd, load, started)
                finally:
                    acp_session = session.acp
                    if acp_session is not None:
                        shared.handlers.pop(acp_session.session_id, None)
                        if self.pool.shares:  # the process may go on serving others
                            with anyio.CancelScope(shield=True):
                                await _let_go(client, acp_session)
        except Exception as exc:  # noqa: BLE001 - the agent's failure, said to the client
            if not started.is_set():
                failure.append(exc)
                detail = str(exc)
            else:
                detail = f"the agent failed: {exc}"
                logger.warning("session %s: %s", record.id, detail)
        finally:
            session.client = None
            session.tg = None
            # What the agent kept of the session (the last turn's answer, its
            # normalizer) goes with it: a stopped session holds no agent-side state.
            session.acp = None
            session.between_turns = None
            session.state.exited(detail)
            session.turn_done.set()
            session.log.close()
            session.agent_done.set()
            started.set()

    async def _serve(
        self,
        session: LiveSession,
        shared: SharedAgent,
        cwd: str,
        load: bool,
        started: anyio.Event,
    ) -> str:
        """Open (or continue) the session on ``shared`` and serve it until it stops; why."""
        record = session.record
        client = shared.client
        assert client is not None
        if load and record.agent_session_id is not None:
            if not (client.offers("session/resume") or client.offers("session/load")):
                raise Conflict(
                    f"{client.agent} cannot load sessions (no loadSession): "
                    f"session {record.id} cannot be continued"
                )
            acp_session = await client.continue_session(record.agent_session_id, cwd=cwd)
        else:
            acp_session = await client.new_session(cwd=cwd)
        session.acp = acp_session
        shared.handlers[acp_session.session_id] = session.answer_permission
        record.agent_session_id = acp_session.session_id
        self.host.save(session)
        for event in acp_session.take_events():  # its own: the process may be shared
            session.publish_event(event)
        async with anyio.create_task_group() as tg:
            session.tg = tg
            session.state.handle("ready")
            started.set()
            tg.start_soon(self._watch_exit, session, client)
            self._start_between_turns(session, tg)
            detail = await session.serve(self.host.config.idle_timeout)
            if session.state.turn:  # a turn runs: it ends with its turn_completed first
                await acp_session.cancel()
                await session.turn_done.wait()
            tg.cancel_scope.cancel()
        return detail

    async def _watch_exit(self, session: LiveSession, client: AcpClient) -> None:
        # A shared agent's exit wakes every session it served: each ends on its own.
        await client.wait_exited()
        session.wake()

    def _start_between_turns(self, session: LiveSession, tg: TaskGroup) -> None:
        # The scope is made here, not in the task: a prompt that comes before the task
        # runs must still be able to cancel it.
        scope = session.between_turns = anyio.CancelScope()
        tg.start_soon(self._between_turns, session, scope)

    async def _between_turns(self, session: LiveSession, scope: anyio.CancelScope) -> None:
        """Publish what the agent sends while no turn runs (mode changes, commands)."""
        acp_session = session.acp
        assert acp_session is not None
        with scope:
            while True:
                # The session's own queue: events no turn reads (AcpSession.take_events
                # has no way to wait for them).
                session.publish_event(await acp_session.queue.get())

    async def prompt(self, session: LiveSession, prompt: str | Sequence[acp.ContentBlock]) -> int:
        """Start a turn; the seq after which its events come. A stopped session is
        continued first."""
        if session.live:
            session.state.handle("prompt")
        else:
            await self._continue(session, "continue")
        try:
            assert session.acp is not None
            assert session.tg is not None
            try:
                turn = session.acp.prompt(prompt)
            except AgentRequestFailed as exc:
                raise BadRequest(str(exc)) from exc
        except BaseException:
            session.state.handle("release")
            raise
        after = session.last_seq
        if session.between_turns is not None:
            session.between_turns.cancel()
        session.turn_done = anyio.Event()
        session.state.handle("turn_begun")
        session.tg.start_soon(self._run_turn, session, turn)
        session.wake()
        return after

    async def _continue(self, session: LiveSession, how: str) -> None:
        if session.record.agent_session_id is None:
            raise Conflict(f"session {session.id} never started: nothing to continue")
        self.host.reserve()
        try:
            await self.start(session, how, load=True)
        finally:
            self.host.release()

    async def _run_turn(self, session: LiveSession, turn: AcpTurn) -> None:
        try:
            async with turn:
                async for event in turn:
                    session.publish_event(event)
        except GemwireError as exc:
            session.notice(f"the turn could not run: {exc}")
        finally:
            client = session.client
            if client is None or not client.running:
                session.state.handle("stop", "the agent exited")
            if session.state.turn:
                session.state.handle("turn_ended")
            self.host.save(session)  # its title, once there is one
            session.turn_done.set()
            if session.tg is not None and session.state.stop_reason is None:
                self._start_between_turns(session, session.tg)
            session.wake()

    async def _ready(self, session: LiveSession) -> AcpSession:
        if not session.live:
            await self._continue(session, "start")
        if session.acp is None:  # it is starting for another request, or stopping
            raise Conflict(f"session {session.id} is {session.state.phase}: try again")
        return session.acp

    async def set_mode(self, session: LiveSession, mode_id: str) -> None:
        acp_session = await self._ready(session)
        offered = [m.id for m in acp_session.modes.available_modes] if acp_session.modes else []
        if mode_id not in offered:
            raise BadRequest(f"the agent offers no mode {mode_id!r}; its modes: {offered}")
        await agent_call(acp_session.set_mode(mode_id))

    async def set_model(self, session: LiveSession, model_id: str) -> None:
        acp_session = await self._ready(session)
        if acp_session.models is not None:
            offered = [m.model_id for m in acp_session.models.available_models]
            if model_id not in offered:
                raise BadRequest(f"the agent offers no model {model_id!r}; its models: {offered}")
        await agent_call(acp_session.set_model(model_id))

    async def set_config(self, session: LiveSession, config_id: str, value: Any) -> None:
        acp_session = await self._ready(session)
        offered = [str(o.get("id")) for o in acp_session.config_options or []]
        if config_id not in offered:
            raise BadRequest(f"the agent offers no option {config_id!r}; its options: {offered}")
        await agent_call(acp_session.set_config_option(config_id, value))


async def _let_go(client: AcpClient, acp_session: AcpSession) -> None:
    """The session leaves its agent (which may serve others): closed where the agent
    offers ``session/close``, else forgotten by the client (so it keeps none of it)."""
    if client.running and client.offers("session/close"):
        with anyio.move_on_after(_CLOSE_WAIT):
            try:
                await acp_session.close()
                return
            except GemwireError:
                pass  # refused, or the agent went: forgotten below
    acp_session.context.forget(acp_session.session_id)


_CLOSE_WAIT = 5.0
"""Seconds an agent has to answer ``session/close`` when a session leaves it."""
