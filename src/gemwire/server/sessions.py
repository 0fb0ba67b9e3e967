"""The server's sessions (`SessionManager`): each one an agent process, its log, its streams.

A session belongs to the server, not to a connection: clients come and go (SSE,
WebSocket, plain HTTP) and the session's agent runs on. Its agent stops when the session
is deleted, when it has been idle for ``idle_timeout`` (status ``stopped``), or when the
server shuts down; a prompt continues a stopped session (``session/load``).

Each session runs in one task (`SessionManager._run_agent`) that owns its `AcpClient`
(one agent process per session) and a task group for its turn and for the events that
come between turns. Every event is masked, put in an envelope with the next seq, appended
to the log and only then offered to subscribers (`EventStream`).

Permission requests: with the preset ``ask`` a request goes to the session's subscribers
(answered over HTTP or WebSocket) and is denied after ``permission_timeout``, at once when
no client is subscribed, or ``permission_grace`` seconds after the last one left unless one
came back. Any other preset answers by itself.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Self

import anyio
import msgspec
from anyio.abc import TaskGroup

from gemwire._normalize.masking import Masker
from gemwire._normalize.notices import notice
from gemwire.errors import AgentNotFound, AgentRequestFailed, GemwireError, RunFailed
from gemwire.events import (
    Event,
    PermissionRequested,
    PermissionResolved,
    SessionStarted,
    SessionUpdated,
    TokenUsage,
    TurnCompleted,
    TurnError,
    UserMessage,
)
from gemwire.runners.acp import (
    AcpClient,
    AcpSession,
    AcpTurn,
    PermissionRequest,
    choose_option,
    permission_preset,
)
from gemwire.server.config import ServerConfig
from gemwire.server.envelopes import SessionState, Status, event_envelope, state_envelope
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
from gemwire.server.store import SESSION_ID, EventLog, SessionRecord, SessionStore
from gemwire.server.stream import GEMINI_STREAM, GeminiStreamLauncher, StreamLauncher, StreamRun
from gemwire.server.streams import EventStream, Subscription
from gemwire.wire import acp

__all__ = ("PERMISSIONS", "LiveSession", "SessionManager", "SessionView")

logger = logging.getLogger("gemwire.server")

PERMISSIONS = ("ask", "deny", "reads", "edits", "all")
_TITLE_CHARS = 80
STREAM_END_GRACE = 3.0
"""Seconds streams have at shutdown to send what is logged and end."""


class SessionView(msgspec.Struct, frozen=True, kw_only=True):
    """A session as the API shows it."""

    id: str
    agent: str
    cwd: str
    agent_session_id: str | None
    status: Status
    created: str
    title: str | None
    last_seq: int
    modes: list[dict[str, Any]] | None
    current_mode: str | None
    models: list[dict[str, Any]] | None
    current_model: str | None
    """The model that runs: the agent's ``currentModelId`` or the last one set (a
    ``gemini-stream`` session's ``--model``); ``None`` when the agent did not say."""
    config_options: list[dict[str, Any]] | None
    commands: list[dict[str, Any]] | None
    usage: TokenUsage | None
    pending_permissions: list[PermissionRequested]


class _Pending:
    """A permission request waiting for a client's answer."""

    def __init__(self, request: PermissionRequest) -> None:
        self.request = request
        self.answered = anyio.Event()
        self.option_id: str | None = None
        self.by_client = False


class LiveSession:
    """One server session: its record, log and stream, and its agent while it runs."""

    def __init__(self, config: ServerConfig, record: SessionRecord, log: EventLog) -> None:
        self.config = config
        self.record = record
        self.log = log
        self.stream = EventStream(log)
        self.status: Status = "closed" if record.closed else "stopped"
        self.client: AcpClient | None = None
        self.acp: AcpSession | None = None
        self.busy = False
        """A turn runs, or a prompt is starting one."""
        self.stop_reason: str | None = None
        self.agent_done = anyio.Event()
        self.agent_done.set()
        self.turn_done = anyio.Event()
        self.turn_done.set()
        self.pending: dict[str, _Pending] = {}
        self.requested: dict[str, PermissionRequested] = {}
        self.commands: list[dict[str, Any]] | None = None
        self.usage: TokenUsage | None = None
        self.tg: TaskGroup | None = None
        self.stream_run: StreamRun | None = None
        """A ``gemini-stream`` session's run, while its turn runs."""
        self.cancel_asked = False
        self._wake = anyio.Event()
        self._masker = Masker([config.token])
        self.between_turns: anyio.CancelScope | None = None
        """The scope of the task that publishes events between turns."""
        self.on_unsubscribe: Callable[[], None] = lambda: None
        """Called when a subscriber leaves (the manager waits for them at shutdown)."""
        self._left = 0
        """How often the last subscriber left (the grace of the latest leaving counts)."""
        self.log_replay = False
        """Log the agent's replay: a saved agent session continued in a new server
        session, whose log does not hold that history yet."""

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def streamed(self) -> bool:
        """A ``gemini-stream`` session: a ``gemini -p`` run a turn, no agent between."""
        return self.record.agent == GEMINI_STREAM

    @property
    def live(self) -> bool:
        """The agent runs (or is starting)."""
        return not self.agent_done.is_set()

    @property
    def last_seq(self) -> int:
        return self.log.last_seq

    @property
    def agent_name(self) -> str:
        """The ``agent`` of events the server itself makes for this session."""
        return self.client.agent if self.client is not None else f"server:{self.record.agent}"

    def wake(self) -> None:
        """Have `serve` look again (a stop asked for, a turn begun or ended, an exit)."""
        self._wake.set()

    async def serve(self, idle_timeout: float) -> str:
        """Wait until the session is stopped, idle too long, or its agent exits; why."""
        assert self.client is not None
        while True:
            self._wake = anyio.Event()
            if self.stop_reason is not None:
                return self.stop_reason
            if not self.client.running:
                return "the agent exited"
            with anyio.move_on_after(float("inf") if self.busy else idle_timeout) as waited:
                await self._wake.wait()
            if waited.cancelled_caught:
                return "idle timeout"

    # Publishing ----------------------------------------------------------------------

    def publish_event(self, event: Event) -> None:
        if event.replay is True and not self.log_replay:
            return  # a loaded session's history: already in the log
        event = self._masker.event(event)
        if isinstance(event, PermissionRequested):
            self.requested[event.request_id] = event
        elif isinstance(event, PermissionResolved):
            self.requested.pop(event.request_id, None)
        elif isinstance(event, TurnCompleted) and event.usage is not None:
            self.usage = event.usage
        elif isinstance(event, UserMessage) and self.record.title is None:
            self.record.title = event.text[:_TITLE_CHARS]
        elif isinstance(event, SessionUpdated):
            self._session_updated(event)
        seq = self.log.last_seq + 1
        self._append(seq, event_envelope(seq, event))

    def publish_state(self, status: Status, detail: str | None = None) -> None:
        self.status = status
        seq = self.log.last_seq + 1
        self._append(seq, state_envelope(seq, SessionState(status=status, detail=detail)))

    def notice(self, message: str) -> None:
        session_id = self.acp.session_id if self.acp is not None else None
        self.publish_event(notice(self.agent_name, session_id, message))

    def _append(self, seq: int, envelope: bytes) -> None:
        self.log.append(seq, envelope)
        self.stream.publish(seq, envelope)

    def _session_updated(self, event: SessionUpdated) -> None:
        data = event.data
        if event.update == "available_commands_update":
            commands = data.get("availableCommands")
            self.commands = commands if isinstance(commands, list) else None
        elif event.update == "session_info_update" and isinstance(data.get("title"), str):
            self.record.title = data["title"]

    # Subscribers and permissions --------------------------------------------------

    def subscribe(self, after: int) -> Subscription:
        return self.stream.subscribe(after)

    def unsubscribe(self, subscription: Subscription) -> None:
        self.stream.unsubscribe(subscription)
        self.on_unsubscribe()
        if not self.stream.subscribers and self.pending and self.tg is not None:
            self._left += 1
            self.tg.start_soon(self._deny_unwatched, self._left)

    async def _deny_unwatched(self, left: int) -> None:
        """Deny what waits once nobody has followed the session for the grace (a reload
        comes back in time, and answers)."""
        await anyio.sleep(self.config.permission_grace)
        if left == self._left and not self.stream.subscribers:
            for pending in self.pending.values():
                pending.answered.set()

    async def answer_permission(self, request: PermissionRequest) -> str | None:
        """The `PermissionHandler` of this session's client."""
        preset = self.record.permissions
        if preset != "ask":
            return await permission_preset(preset)(request)  # type: ignore[arg-type]
        deny = choose_option(request.options, allow=False)
        if not self.stream.subscribers:
            return deny
        pending = self.pending[request.request_id] = _Pending(request)
        try:
            with anyio.move_on_after(self.config.permission_timeout) as waited:
                await pending.answered.wait()
        finally:
            del self.pending[request.request_id]
        if waited.cancelled_caught:
            timeout = self.config.permission_timeout
            message = (
                f"no client answered permission request {request.request_id} "
                f"within {timeout:g} s: denied"
            )
            self.notice(message)
            return deny
        return pending.option_id if pending.by_client else deny

    def resolve(self, request_id: str, option_id: str | None) -> None:
        """A client's answer; `NotFound`, `Conflict`, `BadRequest` as the API says."""
        pending = self.pending.get(request_id)
        if pending is None:
            raise NotFound(f"no permission request {request_id!r} waits in session {self.id}")
        if pending.answered.is_set():
            raise Conflict(f"permission request {request_id!r} is already answered")
        offered = [o.option_id for o in pending.request.options]
        if option_id is not None and option_id not in offered:
            raise BadRequest(f"{option_id!r} was not offered; one of {offered} or null")
        pending.option_id = option_id
        pending.by_client = True
        pending.answered.set()

    # The view --------------------------------------------------------------------------

    def view(self) -> SessionView:
        acp_session = self.acp if self.live else None
        modes = models = config_options = None
        current_mode = None
        current_model = self.record.model if self.streamed else None
        if acp_session is not None:
            if acp_session.modes is not None:
                modes = msgspec.to_builtins(acp_session.modes.available_modes)
                current_mode = acp_session.modes.current_mode_id
            if acp_session.models is not None:
                models = msgspec.to_builtins(acp_session.models.available_models)
                current_model = acp_session.models.current_model_id
            config_options = acp_session.config_options
        return SessionView(
            id=self.id,
            agent=self.record.agent,
            cwd=self.record.cwd,
            agent_session_id=self.record.agent_session_id,
            status=self.status,
            created=self.record.created,
            title=self.record.title,
            last_seq=self.last_seq,
            modes=modes,
            current_mode=current_mode,
            models=models,
            current_model=current_model,
            config_options=config_options,
            commands=self.commands,
            usage=self.usage,
            pending_permissions=list(self.requested.values()),
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


class SessionManager:
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
        self._starting = 0
        self._draining = False
        self._unsubscribed = anyio.Event()

    async def __aenter__(self) -> Self:
        self.store.create()
        for record in self.store.records():
            if isinstance(record, str):
                logger.warning("skipped a saved session: %s", record)
                continue
            session = self._session(record)
            self.sessions[record.id] = session
            if session.log.torn:
                session.notice(
                    "the end of this session's log was torn (the server stopped "
                    "while writing it): that line was dropped"
                )
        self._tg = await anyio.create_task_group().__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        with anyio.CancelScope(shield=True):
            await self.drain()
        self._tg.cancel_scope.cancel()
        await self._tg.__aexit__(None, None, None)

    def _session(self, record: SessionRecord) -> LiveSession:
        session = LiveSession(self.config, record, self.store.log(record.id))
        session.on_unsubscribe = lambda: self._unsubscribed.set()
        return session

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

    def _check_capacity(self) -> None:
        self._check_draining()
        # An idle session's agent runs on (until --idle-timeout); a gemini-stream
        # session runs one only while its turn does.
        live = self._starting + sum(
            1 for s in self.sessions.values() if s.live or (s.streamed and s.busy)
        )
        if live >= self.config.max_sessions:
            raise LimitReached(
                f"{live} sessions run an agent (--max-sessions {self.config.max_sessions}): "
                "close one (DELETE /v1/sessions/{id}) or wait for one to stop (an idle "
                f"session stops after --idle-timeout {self.config.idle_timeout:g} s)"
            )

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
        self.launcher.options(agent, cwd)  # an unknown agent is a 404 before anything
        self._check_capacity()
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
            await self._start(session, load=resume is not None)
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
        session.publish_state("idle")
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

    async def _start(self, session: LiveSession, *, load: bool) -> None:
        """Start the session's agent (``load``: continue the agent's session); returns
        once the session is ready, raising what kept it from starting."""
        self._check_capacity()
        cwd = self._confined(session)
        self._starting += 1
        try:
            session.stop_reason = None
            session.agent_done = anyio.Event()
            session.stream.reopen()
            session.publish_state("starting")
            started = anyio.Event()
            failure: list[BaseException] = []
            self._tg.start_soon(self._run_agent, session, cwd, load, started, failure)
            await started.wait()
        finally:
            self._starting -= 1
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
                self.store.save(record)
                for event in client.take_events():
                    session.publish_event(event)
                session.publish_state("idle")
                started.set()
                tg.start_soon(self._watch_exit, session, client)
                self._start_between_turns(session, tg)
                detail = await session.serve(self.config.idle_timeout)
                if session.busy:  # a turn runs: it ends with its turn_completed first
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
            session.busy = False
            session.turn_done.set()
            if session.stop_reason == "closed":
                session.publish_state("closed")
            else:
                session.publish_state("stopped", session.stop_reason or detail)
            session.log.close()
            session.agent_done.set()
            started.set()

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
            session.stop_reason = reason
            session.wake()
            await session.agent_done.wait()
        elif session.streamed and session.busy:
            await self._cancel_streamed(session, reason)
            await session.turn_done.wait()

    # Turns ---------------------------------------------------------------------------

    async def prompt(self, session: LiveSession, prompt: str | Sequence[acp.ContentBlock]) -> int:
        """Start a turn; the seq after which its events come. A stopped session is
        continued first."""
        if session.status == "closed":
            raise Conflict(f"session {session.id} is closed")
        if session.busy:
            raise Conflict(f"a turn is running in session {session.id}")
        self._check_draining()  # a turn now would only be cancelled
        if session.streamed:
            return self._prompt_streamed(session, prompt)
        session.busy = True
        try:
            if not session.live:
                await self._continue(session)
            assert session.acp is not None
            assert session.tg is not None
            try:
                turn = session.acp.prompt(prompt)
            except AgentRequestFailed as exc:
                raise BadRequest(str(exc)) from exc
        except BaseException:
            session.busy = False
            raise
        after = session.last_seq
        if session.between_turns is not None:
            session.between_turns.cancel()
        session.turn_done = anyio.Event()
        session.publish_state("running")
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
        self._check_capacity()
        cwd = self._confined(session)  # each turn is a new `gemini -p` there
        after = session.last_seq
        session.busy = True
        session.turn_done = anyio.Event()
        session.publish_state("running")
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
                if session.cancel_asked:
                    await run.cancel("the turn was cancelled")
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
            session.cancel_asked = False
            session.busy = False
            if self._draining:
                session.publish_state("stopped", "server shutdown")
            else:
                session.publish_state("idle")
            self.store.save(record)
            session.turn_done.set()

    async def _cancel_streamed(self, session: LiveSession, reason: str) -> None:
        session.cancel_asked = True  # a run not started yet is cancelled as it starts
        if session.stream_run is not None:
            await session.stream_run.cancel(reason)

    async def _continue(self, session: LiveSession) -> None:
        if session.record.agent_session_id is None:
            raise Conflict(f"session {session.id} never started: nothing to continue")
        await self._start(session, load=True)

    async def _run_turn(self, session: LiveSession, turn: AcpTurn) -> None:
        try:
            async with turn:
                async for event in turn:
                    session.publish_event(event)
        except GemwireError as exc:
            session.notice(f"the turn could not run: {exc}")
        finally:
            session.busy = False
            client = session.client
            if client is not None and client.running and session.stop_reason is None:
                session.publish_state("idle")
            self.store.save(session.record)  # its title, once there is one
            session.turn_done.set()
            if session.tg is not None and session.stop_reason is None:
                self._start_between_turns(session, session.tg)
            session.wake()

    async def cancel(self, session: LiveSession) -> None:
        if session.busy and session.streamed:
            await self._cancel_streamed(session, "the turn was cancelled")
            return
        if not session.busy or session.acp is None:
            raise Conflict(f"no turn runs in session {session.id}")
        await session.acp.cancel()

    # Settings ------------------------------------------------------------------------

    async def _ready(self, session: LiveSession) -> AcpSession:
        if session.status == "closed":
            raise Conflict(f"session {session.id} is closed")
        if session.streamed:
            raise BadRequest(f"{GEMINI_STREAM} sessions have a model, and no modes or options")
        if not session.live:
            await self._continue(session)
        assert session.acp is not None
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
            self.store.save(session.record)
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
        live = session.live
        await self._stop(session, "closed")
        if not live:  # else the agent's task said it
            session.publish_state("closed")
            session.log.close()
        session.record.closed = True
        self.store.save(session.record)
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
