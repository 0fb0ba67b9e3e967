"""The server's sessions (`SessionManager`): each one an agent session (on a process of
`agent_pool`, its own or shared), its log, its streams.

A session belongs to the server, not to a connection: clients come and go (SSE,
WebSocket, plain HTTP) and the session's agent runs on. Its agent stops when the session
is deleted, when it has been idle for ``idle_timeout`` (status ``stopped``), or when the
server shuts down; a prompt continues a stopped session (``session/load``).

The manager keeps what every session shares: the registry, the capacity (``--max-sessions``,
counted from the moment a request is taken), the store and the drain. Turns, settings and
stopping go to the session's `SessionBackend` (`backend_acp`: an agent process kept between
turns; `backend_stream`: a ``gemini -p`` run a turn). Every change of a session's status
goes through its `ServedState` (`session_state`); a request its state does not allow is a
409.

A session whose log ends mid-turn when the server starts (the server was killed, or
the machine lost power) gets the end its clients wait for, logged once: a
``turn_completed`` (error kind ``crashed``) and a ``stopped`` state. A session whose log
is damaged is served up to the damage and never continued (`LiveSession.failure`);
``/ready`` lists it with any session whose log could not be written (`degraded`).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any, Self

import anyio
from anyio import AsyncContextManagerMixin
from anyio.abc import TaskGroup

from gemwire.events import TurnCompleted, TurnError
from gemwire.serve_api import Degraded, SessionView
from gemwire.server.backend import SessionBackend
from gemwire.server.backend_acp import AcpBackend
from gemwire.server.backend_stream import StreamBackend
from gemwire.server.config import ServerConfig
from gemwire.server.live_session import LiveSession
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
        self.acp = AcpBackend(self, launcher)
        self.streamed = StreamBackend(self, stream_launcher or GeminiStreamLauncher())
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

    def degraded(self) -> list[Degraded]:
        """The sessions out of service (`LiveSession.failure`), for ``/ready``."""
        return [Degraded(s.id, s.failure) for s in self.sessions.values() if s.failure is not None]

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

    @property
    def tg(self) -> TaskGroup:
        return self._tg

    def _backend(self, session: LiveSession) -> SessionBackend:
        return self.streamed if session.streamed else self.acp

    def reserve(self) -> None:
        """Count one more agent against ``--max-sessions`` (`_release` it): no await
        comes between the check and the count, so concurrent creates cannot pass it."""
        self._check_draining()
        # An idle session's agent runs on (until --idle-timeout); a gemini-stream
        # session runs one only while its turn does.
        live = self._reserved + sum(
            1 for s in self.sessions.values() if self._backend(s).runs_agent(s)
        )
        if live >= self.config.max_sessions:
            raise LimitReached(
                f"{live} sessions run an agent (--max-sessions {self.config.max_sessions}): "
                "close one (DELETE /v1/sessions/{id}) or wait for one to stop (an idle "
                f"session stops after --idle-timeout {self.config.idle_timeout:g} s)"
            )
        self._reserved += 1

    def release(self) -> None:
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
        self.reserve()
        try:
            session_id = f"s_{secrets.token_hex(8)}"
            record = SessionRecord(
                id=session_id,
                agent=agent,
                cwd=cwd,
                created=_now(),
                permissions=permissions,
                agent_session_id=resume,
                mode=mode,  # its client opens it in that mode, and continues it so
            )
            self.store.save(record)
            session = self._session(record)
            session.log_replay = resume is not None
            try:
                await self.acp.start(session, "start", load=resume is not None)
                session.log_replay = False  # a later continuation's replay is logged already
                if model is not None:
                    await self.set_model(session, model)
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await self._stop(session, "the session could not be set up")
                session.log.close()
                self.store.remove(session_id)
                raise
            self.sessions[session_id] = session
        finally:
            self.release()
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
        self.streamed.check()
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

    def confined(self, session: LiveSession) -> str:
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

    def save(self, session: LiveSession) -> None:
        """Save the session's record; a failure is said, and the session goes on (its
        record is rewritten whole at the next change)."""
        try:
            self.store.save(session.record)
        except OSError as exc:
            logger.error("session %s: its record could not be saved: %s", session.id, exc)

    async def _stop(self, session: LiveSession, reason: str) -> None:
        await self._backend(session).stop(session, reason)

    # Turns and settings ----------------------------------------------------------------

    async def prompt(self, session: LiveSession, prompt: str | Sequence[acp.ContentBlock]) -> int:
        """Start a turn; the seq after which its events come. A stopped session is
        continued first."""
        session.check_in_service()
        self._check_draining()  # a turn now would only be cancelled
        return await self._backend(session).prompt(session, prompt)

    async def cancel(self, session: LiveSession) -> None:
        """Cancel the running turn (`IllegalTransition`, a 409, when none runs)."""
        await self._backend(session).cancel(session)

    def _settable(self, session: LiveSession) -> SessionBackend:
        if session.status == "closed":
            raise Conflict(f"session {session.id} is closed")
        return self._backend(session)

    async def set_mode(self, session: LiveSession, mode_id: str) -> None:
        await self._settable(session).set_mode(session, mode_id)
        if session.record.mode is not None:  # it is continued in the mode chosen last
            session.record.mode = mode_id
            self.save(session)

    async def set_model(self, session: LiveSession, model_id: str) -> None:
        await self._settable(session).set_model(session, model_id)

    async def set_config(self, session: LiveSession, config_id: str, value: Any) -> None:
        await self._settable(session).set_config(session, config_id, value)

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
        self.save(session)
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
