"""The server's sessions (`SessionManager`): each one an agent process, its log, its streams.

A session belongs to the server, not to a connection: clients come and go (SSE,
WebSocket, plain HTTP) and the session's agent runs on. Its agent stops when the session
is deleted, when it has been idle for ``idle_timeout`` (status ``stopped``), or when the
server shuts down; a prompt continues a stopped session (``session/load``).

Each session runs in one task (`SessionManager._run_agent`) that owns its `AcpClient`
(one agent process per session) and a task group for its turn and for the events that
come between turns. Every change of a session's status goes through its `ServedState`
(`session_state`); a request its state does not allow is a 409.

A session whose log ends mid-turn when the server starts (the server was killed, or
the machine lost power) gets the end its clients wait for, logged once: a
``turn_completed`` (error kind ``crashed``) and a ``stopped`` state. A session whose log
is damaged is served up to the damage and never continued (`LiveSession.failure`);
``/ready`` lists it with any session whose log could not be written (`degraded`).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncGenerator, Awaitable, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any, Self

import anyio
from anyio import AsyncContextManagerMixin
from anyio.abc import TaskGroup

from gemwire.errors import AgentNotFound, AgentRequestFailed, GemwireError, RunFailed
from gemwire.events import SessionStarted, TurnCompleted, TurnError
from gemwire.runners.acp import AcpClient, AcpSession, AcpTurn
from gemwire.server.config import ServerConfig
from gemwire.server.live_session import LiveSession, SessionView
from gemwire.server.paths import confine
from gemwire.server.responses import (
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    LimitReached,
    NotFound,
)
from gemwire.server.spares import SpareAgents
from gemwire.server.store import SESSION_ID, SessionRecord, SessionStore
from gemwire.server.stream import GEMINI_STREAM, GeminiStreamLauncher, StreamLauncher
from gemwire.wire import acp

__all__ = ("PERMISSIONS", "LiveSession", "SessionManager", "SessionView")

logger = logging.getLogger("gemwire.server")

PERMISSIONS = ("ask", "deny", "reads", "edits", "all")
STREAM_END_GRACE = 3.0
"""Seconds streams have at shutdown to send what is logged and end."""
CRASHED = (
    "the server stopped during this turn (it was killed, crashed or lost power): "
    "the turn never ended"
)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _agent_failure(exc: BaseException) -> ApiError:
    """An agent that could not start, load or answer, as the API's error."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, AgentNotFound):
        return NotFound(f"the agent could not be started: {exc}")
    kind = exc.kind if isinstance(exc, RunFailed) else "agent"
    return ApiError(f"the agent failed: {exc}", status=502, kind=kind)


async def _agent_call(call: Awaitable[None]) -> None:
    """A request to the agent, its refusal a 400 and its failure a 502."""
    try:
        await call
    except AgentRequestFailed as exc:
        raise BadRequest(f"the agent refused: {exc}") from exc
    except RunFailed as exc:
        raise _agent_failure(exc) from exc


class SessionManager(AsyncContextManagerMixin):
    """Every session of the server, live, stopped or closed; use with ``async with``
    (the app's lifespan), which loads the sessions in the state folder and, on leaving,
    stops every agent (`drain`)."""

    def __init__(
        self,
        config: ServerConfig,
        launcher: SpareAgents,
        stream_launcher: StreamLauncher | None = None,
    ) -> None:
        self.config = config
        self.launcher = launcher
        self.stream_launcher = stream_launcher or GeminiStreamLauncher()
        self.store = SessionStore(config.state_dir)
        self.sessions: dict[str, LiveSession] = {}
        self._reserved = 0
        """Agents being started (a create, a continuation): counted against the limit
        from the moment the request is taken."""
        self._draining = False
        self._unsubscribed = anyio.Event()
        self._tg: TaskGroup

    @asynccontextmanager
    async def __asynccontextmanager__(self) -> AsyncGenerator[Self]:
        self.store.create()
        for record in self.store.records():
            if isinstance(record, str):
                logger.warning("skipped a saved session: %s", record)
                continue
            session = self._session(record)
            self.sessions[record.id] = session
            self._loaded(session)
        async with anyio.create_task_group() as self._tg:
            try:
                yield self
            finally:
                with anyio.CancelScope(shield=True):
                    await self.drain()
                self._tg.cancel_scope.cancel()

    def _session(self, record: SessionRecord) -> LiveSession:
        session = LiveSession(self.config, record, self.store.log(record.id))
        session.on_unsubscribe = lambda: self._unsubscribed.set()
        session.on_failure = lambda why: self._failed(session, why)
        return session

    def _loaded(self, session: LiveSession) -> None:
        """A session read from the state folder: its log's damage said, its torn end
        noted, and a turn the server died in ended (once: then its log ends stopped)."""
        log = session.log
        if log.damage is not None:
            session.failure = f"its log is damaged: {log.damage}"
            logger.warning(
                "session %s: %s; its events are served up to there, and it cannot be continued",
                session.id,
                session.failure,
            )
            return
        if log.torn:
            session.notice(
                "the end of this session's log was torn (the server stopped "
                "while writing it): that line was dropped"
            )
        if session.record.closed or log.last_status not in ("starting", "running"):
            return
        if log.turn_open:
            error = TurnError(kind="crashed", message=CRASHED)
            session.publish_event(
                TurnCompleted(
                    agent=session.agent_name,
                    session_id=session.record.agent_session_id,
                    ok=False,
                    stop_reason="error",
                    error=error,
                    answer="",
                )
            )
        session.state.handle("crashed", "the server stopped (it was killed, or crashed)")

    def _failed(self, session: LiveSession, why: str) -> None:
        """A session's log could not be written: stop it (alone)."""
        if session.live or session.busy:
            self._tg.start_soon(self._stop, session, why)

    def degraded(self) -> list[dict[str, str]]:
        """The sessions out of service (`LiveSession.failure`), for ``/ready``."""
        return [
            {"session": s.id, "reason": s.failure}
            for s in self.sessions.values()
            if s.failure is not None
        ]

    # Lookups -------------------------------------------------------------------------

    def get(self, session_id: str) -> LiveSession:
        session = self.sessions.get(session_id) if SESSION_ID.match(session_id) else None
        if session is None:
            raise NotFound(f"no session {session_id!r}")
        return session

    def views(self) -> list[SessionView]:
        return [session.view() for session in self.sessions.values()]

    # Starting and stopping agents --------------------------------------------------

    def _check_draining(self) -> None:
        if self._draining:
            raise ApiError("the server is shutting down", status=503, kind="limit")

    def _reserve(self) -> None:
        """Count one more agent against ``--max-sessions`` (`_release` it): no await
        comes between the check and the count, so concurrent creates cannot pass it."""
        self._check_draining()
        # An idle session's agent runs on (until --idle-timeout); a gemini-stream
        # session runs one only while its turn does.
        live = self._reserved + sum(
            1 for s in self.sessions.values() if s.live or (s.streamed and s.busy)
        )
        if live >= self.config.max_sessions:
            raise LimitReached(
                f"{live} sessions run an agent (--max-sessions {self.config.max_sessions}): "
                "close one (DELETE /v1/sessions/{id}) or wait for one to stop (an idle "
                f"session stops after --idle-timeout {self.config.idle_timeout:g} s)"
            )
        self._reserved += 1

    def _release(self) -> None:
        self._reserved -= 1

    async def create(
        self,
        agent: str,
        cwd: str,
        *,
        permissions: str = "ask",
        model: str | None = None,
        mode: str | None = None,
        resume: str | None = None,
    ) -> LiveSession:
        """A new session of ``agent`` in ``cwd`` (already confined), its agent started;
        ``resume``: the agent's saved session of that id, continued (its replayed history
        logged), or a `Conflict` when the agent can neither resume nor load sessions."""
        if agent == GEMINI_STREAM:
            return self._create_streamed(
                cwd, permissions=permissions, model=model, mode=mode, resume=resume
            )
        try:
            self.launcher.options(agent, cwd)  # an unknown agent is a 404 before anything
        except NotFound as exc:
            if str(exc).startswith("unknown agent"):  # the launcher knows ACP agents only
                raise NotFound(f"{exc}, {GEMINI_STREAM}") from exc
            raise
        self._reserve()
        try:
            session_id = f"s_{secrets.token_hex(8)}"
            record = SessionRecord(
                id=session_id,
                agent=agent,
                cwd=cwd,
                created=_now(),
                permissions=permissions,
                agent_session_id=resume,
            )
            self.store.save(record)
            session = self._session(record)
            session.log_replay = resume is not None
            try:
                await self._start(session, "start", load=resume is not None)
                session.log_replay = False  # a later continuation's replay is logged already
                if model is not None:
                    await self.set_model(session, model)
                if mode is not None:
                    await self.set_mode(session, mode)
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await self._stop(session, "the session could not be set up")
                session.log.close()
                self.store.remove(session_id)
                raise
            self.sessions[session_id] = session
        finally:
            self._release()
        return session

    def _create_streamed(
        self,
        cwd: str,
        *,
        permissions: str,
        model: str | None,
        mode: str | None,
        resume: str | None,
    ) -> LiveSession:
        if mode is not None:
            raise BadRequest(f"{GEMINI_STREAM} has no modes (its permissions choose one)")
        self.stream_launcher.check()
        record = SessionRecord(
            id=f"s_{secrets.token_hex(8)}",
            agent=GEMINI_STREAM,
            cwd=cwd,
            created=_now(),
            permissions=permissions,
            model=model,
            agent_session_id=resume,  # the first run's --resume
        )
        self.store.save(record)
        session = self._session(record)
        session.state.handle("ready")
        self.sessions[record.id] = session
        return session

    def _confined(self, session: LiveSession) -> str:
        """The session's folder, confined to the roots again (it was when the session was
        made, but since then the folder may have been replaced by a symlink, the server
        restarted with other roots, or ``session.json`` edited): `Forbidden` or
        `BadRequest`, and a ``notice`` in its log, where a new session would be refused."""
        cwd = session.record.cwd
        try:
            real = confine(cwd, self.config.roots)
            if real != cwd:
                raise Forbidden(
                    f"{cwd!r} now leads to {real}, not to the folder the session was made in"
                )
        except ApiError as exc:
            session.notice(f"session {session.id} not continued: {exc}")
            raise
        return real

    async def _start(self, session: LiveSession, how: str, *, load: bool) -> None:
        """Start the session's agent (``how``: its state's ``start``, or ``continue`` for
        a prompt; ``load``: continue the agent's session); returns once the session is
        ready, raising what kept it from starting. The caller holds a `_reserve`."""
        session.check_in_service()
        cwd = self._confined(session)
        session.state.handle("continue" if how == "continue" else "start")
        session.agent_done = anyio.Event()
        session.stream.reopen()
        started = anyio.Event()
        failure: list[BaseException] = []
        self._tg.start_soon(self._run_agent, session, cwd, load, started, failure)
        await started.wait()
        if failure:
            raise _agent_failure(failure[0]) from failure[0]

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
            options = self.launcher.options(record.agent, cwd)
            channel = self.launcher.session_channel(options)
            async with (
                AcpClient(
                    options, channel=channel, permission_handler=session.answer_permission
                ) as client,
                anyio.create_task_group() as tg,
            ):
                session.client, session.tg = client, tg
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
                record.agent_session_id = acp_session.session_id
                self._save(session)
                for event in client.take_events():
                    session.publish_event(event)
                session.state.handle("ready")
                started.set()
                tg.start_soon(self._watch_exit, session, client)
                self._start_between_turns(session, tg)
                detail = await session.serve(self.config.idle_timeout)
                if session.state.turn:  # a turn runs: it ends with its turn_completed first
                    await acp_session.cancel()
                    await session.turn_done.wait()
                tg.cancel_scope.cancel()
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

    def _save(self, session: LiveSession) -> None:
        """Save the session's record; a failure is said, and the session goes on (its
        record is rewritten whole at the next change)."""
        try:
            self.store.save(session.record)
        except OSError as exc:
            logger.error("session %s: its record could not be saved: %s", session.id, exc)

    async def _watch_exit(self, session: LiveSession, client: AcpClient) -> None:
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

    async def _stop(self, session: LiveSession, reason: str) -> None:
        """Stop the session's agent (its turn first) and wait until it has."""
        if session.live:
            session.state.handle("stop", reason)
            session.wake()
            await session.agent_done.wait()
        elif session.streamed and session.busy:
            session.state.handle("stop", reason)
            if session.stream_run is not None:
                await session.stream_run.cancel(reason)
            await session.turn_done.wait()

    # Turns ---------------------------------------------------------------------------

    async def prompt(self, session: LiveSession, prompt: str | Sequence[acp.ContentBlock]) -> int:
        """Start a turn; the seq after which its events come. A stopped session is
        continued first."""
        session.check_in_service()
        self._check_draining()  # a turn now would only be cancelled
        if session.streamed:
            return self._prompt_streamed(session, prompt)
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

    def _prompt_streamed(
        self, session: LiveSession, prompt: str | Sequence[acp.ContentBlock]
    ) -> int:
        if not isinstance(prompt, str):
            if not all(isinstance(block, acp.TextContent) for block in prompt):
                raise BadRequest(f"{GEMINI_STREAM} takes text prompts only")
            prompt = "".join(block.text for block in prompt if isinstance(block, acp.TextContent))
        self._reserve()
        try:
            cwd = self._confined(session)  # each turn is a new `gemini -p` there
            session.state.handle("prompt")  # from here its turn counts against the limit
        finally:
            self._release()
        after = session.last_seq
        session.turn_done = anyio.Event()
        session.state.handle("turn_begun")
        self._tg.start_soon(self._run_streamed_turn, session, prompt, cwd)
        return after

    async def _run_streamed_turn(self, session: LiveSession, prompt: str, cwd: str) -> None:
        record = session.record
        try:
            async with self.stream_launcher.run(
                prompt,
                cwd,
                resume=record.agent_session_id,
                permissions=record.permissions,
                model=record.model,
            ) as run:
                session.stream_run = run
                if session.state.phase in ("cancelling", "stopping"):
                    await run.cancel(session.state.stop_reason or "the turn was cancelled")
                async for event in run:
                    if isinstance(event, SessionStarted) and record.agent_session_id is None:
                        record.agent_session_id = event.session_id
                    session.publish_event(event)
        except GemwireError as exc:  # it could not start: still one turn_completed
            kind = exc.kind if isinstance(exc, RunFailed) else "agent"
            error = TurnError(kind=kind, message=str(exc))
            session.publish_event(
                TurnCompleted(
                    agent=session.agent_name,
                    session_id=record.agent_session_id,
                    ok=False,
                    stop_reason="error",
                    error=error,
                    answer="",
                )
            )
        finally:
            session.stream_run = None
            session.state.handle("turn_ended")
            if session.state.phase == "stopping":  # its run was its agent: it has stopped
                session.state.exited("stopped")
            self._save(session)
            session.turn_done.set()

    async def _continue(self, session: LiveSession, how: str) -> None:
        if session.record.agent_session_id is None:
            raise Conflict(f"session {session.id} never started: nothing to continue")
        self._reserve()
        try:
            await self._start(session, how, load=True)
        finally:
            self._release()

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
            self._save(session)  # its title, once there is one
            session.turn_done.set()
            if session.tg is not None and session.state.stop_reason is None:
                self._start_between_turns(session, session.tg)
            session.wake()

    async def cancel(self, session: LiveSession) -> None:
        """Cancel the running turn (`IllegalTransition`, a 409, when none runs)."""
        send = session.state.cancel()
        if not send:
            return  # asked already (or the session is stopping: its turn is cancelled)
        if session.streamed:
            if session.stream_run is not None:  # else it is cancelled as it starts
                await session.stream_run.cancel("the turn was cancelled")
        elif session.acp is not None:
            await session.acp.cancel()

    # Settings ------------------------------------------------------------------------

    async def _ready(self, session: LiveSession) -> AcpSession:
        if session.status == "closed":
            raise Conflict(f"session {session.id} is closed")
        if session.streamed:
            raise BadRequest(f"{GEMINI_STREAM} sessions have a model, and no modes or options")
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
        await _agent_call(acp_session.set_mode(mode_id))

    async def set_model(self, session: LiveSession, model_id: str) -> None:
        if session.streamed and session.status != "closed":
            session.record.model = model_id  # the next run's --model
            self._save(session)
            return
        acp_session = await self._ready(session)
        if acp_session.models is not None:
            offered = [m.model_id for m in acp_session.models.available_models]
            if model_id not in offered:
                raise BadRequest(f"the agent offers no model {model_id!r}; its models: {offered}")
        await _agent_call(acp_session.set_model(model_id))

    async def set_config(self, session: LiveSession, config_id: str, value: Any) -> None:
        acp_session = await self._ready(session)
        offered = [str(o.get("id")) for o in acp_session.config_options or []]
        if config_id not in offered:
            raise BadRequest(f"the agent offers no option {config_id!r}; its options: {offered}")
        await _agent_call(acp_session.set_config_option(config_id, value))

    # Closing -------------------------------------------------------------------------

    async def close(self, session: LiveSession) -> None:
        """Stop the agent for good; the log stays (status ``closed``)."""
        if session.status == "closed":
            return
        await self._stop(session, "closed")
        if session.state.phase != "closed":  # no agent ran to say it
            session.state.handle("close")
            session.log.close()
        session.record.closed = True
        self._save(session)
        session.stream.close()

    async def drain(self) -> None:
        """Shutdown: every turn ends (``turn_completed``), every agent stops, every
        stream ends once it has sent what is logged."""
        self._draining = True
        async with anyio.create_task_group() as tg:
            for session in list(self.sessions.values()):
                tg.start_soon(self._stop, session, "server shutdown")
        for session in self.sessions.values():
            session.stream.close()
            session.log.close()
        # Let each stream send what is left and end (WebSockets close with 1001) before
        # the server closes the connections under them.
        with anyio.move_on_after(STREAM_END_GRACE):
            while any(session.stream.subscribers for session in self.sessions.values()):
                self._unsubscribed = anyio.Event()
                await self._unsubscribed.wait()
