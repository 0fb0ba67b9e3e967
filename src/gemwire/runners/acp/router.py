"""Routing what the agent sends to the sessions it belongs to, and holding the reader back.

`SessionRouter` keeps the sessions of one client by id. Each ``session/update`` goes to
the session it names (an update for a session whose ``session/new`` answer is still on
its way waits for it); what belongs to no one session goes to every turn running, or to
the next session opened when none runs. The agent's login (``auth_status``) is the
process's, not a session's: the latest is kept, and every session opened gets it, not
only the next one (a process may serve many sessions, each its own reader: a server's). The reader asks `may_read` before each read:
it waits while a turn being consumed has `MAX_QUEUED_EVENTS` queued, unless a request of
the caller waits for its answer.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine

import anyio
import msgspec
from anyio.abc import TaskGroup

from gemwire._normalize.acp_ext import agent_notification
from gemwire.errors import AccessDenied
from gemwire.events import AuthStatus, Event, Notice, Unknown
from gemwire.protocol.acp import (
    AcpItem,
    AgentNotification,
    AgentRequest,
    LoneSurrogates,
    OversizedLine,
    ProtocolViolation,
    SessionUpdate,
    UnknownUpdate,
    UnservedRequest,
)
from gemwire.runners.acp.events import MAX_QUEUED_EVENTS
from gemwire.runners.acp.peer import AgentPeer
from gemwire.runners.acp.quirks import drops_violation
from gemwire.runners.acp.session import AcpSession, SessionContext
from gemwire.wire import acp

__all__ = ("SessionRouter",)


class SessionRouter:
    """See the module docstring; ``serve`` answers an agent request (in its own task)."""

    def __init__(self, peer: AgentPeer) -> None:
        self._peer = peer
        self.sessions: dict[str, AcpSession] = {}
        self._early: list[SessionUpdate | UnknownUpdate] = []
        self._unrouted: list[Event] = []
        self._changed: anyio.Event | None = None
        """Set when a consumer took events; made only while the reader waits (`wake` runs
        once an event)."""
        self.opening = 0
        """``session/new`` requests waiting for their answer."""
        self._auth: AuthStatus | None = None
        """The agent's latest ``auth_status``."""

    def bind(
        self,
        context: SessionContext,
        task_group: TaskGroup,
        serve: Callable[[AgentRequest], Coroutine[object, object, None]],
    ) -> None:
        self._context = context
        self._tg = task_group
        self._serve = serve

    def session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise AccessDenied(f"no session {session_id!r}")
        return session

    def register(self, session: AcpSession, events: list[Event]) -> None:
        """Add a session; it gets ``events`` (its ``session_started``), then what came
        before it for no one, then updates that arrived before its ``session/new``
        answer."""
        sid = session.session_id
        self.sessions[sid] = session
        session.emit(events)
        unrouted, self._unrouted = self._unrouted, []
        if self._auth is not None and self._auth not in unrouted:
            unrouted.insert(0, self._auth)
        session.emit([_for_session(e, sid) for e in unrouted])
        early = [item for item in self._early if item.session_id == sid]
        self._early = [item for item in self._early if item.session_id != sid]
        for item in early:
            session.feed(item)

    def forget(self, session_id: str) -> None:
        self.sessions.pop(session_id, None)

    def hold(self, event: Event) -> None:
        """Keep an event for the next session opened (or `take_events`)."""
        self._unrouted.append(event)

    def take_events(self) -> list[Event]:
        events, self._unrouted = self._unrouted, []
        for session in self.sessions.values():
            events += session.take_events()
        return events

    def wake(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    async def may_read(self) -> None:
        while self._held():
            if self._changed is None:
                self._changed = anyio.Event()
            await self._changed.wait()

    def _held(self) -> bool:
        """A turn being consumed has `MAX_QUEUED_EVENTS` queued, and no request of the
        caller waits (asked before each read: a plain loop, no generator)."""
        if self._peer.control_requests > 0:
            return False
        for session in self.sessions.values():
            if session.turn is not None and len(session.queue) >= MAX_QUEUED_EVENTS:
                return True
        return False

    def dispatch(self, item: AcpItem) -> None:
        notice = self._context.notice
        match item:
            case SessionUpdate() | UnknownUpdate():
                self._on_update(item)
            case AgentRequest():
                self._tg.start_soon(self._serve, item)
            case UnservedRequest():
                message = f"refused the agent's {item.method}: {item.message}"
                self.broadcast([notice(self._peer.mask(message))])
                self._tg.start_soon(self._peer.reply_error, item.id, item.code, item.message)
            case AgentNotification(method="elicitation/complete"):
                message = f"the agent completed elicitation {_elicitation_id(item.params)}"
                self.broadcast([notice(self._peer.mask(message), severity="info")])
            case AgentNotification():
                known = agent_notification(self._context.agent(), item.method, item.params)
                self.broadcast([known or self._unknown(item.method, item.params or "")])
            case ProtocolViolation():
                if drops_violation(self._context.agent(), item):
                    return
                message = f"protocol violation: {item.reason}: {item.line[:200]}"
                self.broadcast([notice(self._peer.mask(message))])
            case OversizedLine():
                message = f"skipped a {item.size}-byte message: over the {item.limit}-byte limit"
                self.broadcast([notice(message)])
            case LoneSurrogates():
                self.broadcast([notice(item.message)])

    def broadcast(self, events: list[Event]) -> None:
        """What belongs to no one session goes to every turn running (each sees it), or
        waits for the next session opened (or `take_events`) when none runs."""
        self._auth = next((e for e in reversed(events) if isinstance(e, AuthStatus)), self._auth)
        running = [s for s in self.sessions.values() if s.turn is not None]
        for session in running:
            session.emit([_for_session(e, session.session_id) for e in events])
        if not running:
            self._unrouted += events

    def _on_update(self, item: SessionUpdate | UnknownUpdate) -> None:
        session = self.sessions.get(item.session_id or "")
        if session is not None:
            session.feed(item)
        elif self.opening and item.session_id:
            self._early.append(item)  # for a session whose session/new answer is on its way
        else:
            raw = (
                item.raw
                if isinstance(item, UnknownUpdate)
                else msgspec.json.encode(
                    {"sessionId": item.session_id, "update": item.update}
                ).decode()
            )
            self.broadcast([self._unknown("session/update", raw, item.session_id)])

    def _unknown(self, upstream_type: str, raw: str, session_id: str | None = None) -> Event:
        return Unknown(
            agent=self._context.agent(),
            session_id=session_id,
            upstream_type=upstream_type,
            raw=raw,
        )


def _elicitation_id(params: str | None) -> str:
    try:
        done = msgspec.json.decode(params or "null", type=acp.CompleteElicitationNotification)
    except msgspec.DecodeError:
        return f"(unreadable: {(params or '')[:200]})"
    return done.elicitation_id


def _for_session(event: Event, session_id: str) -> Event:
    if isinstance(event, Notice | Unknown | AuthStatus) and event.session_id is None:
        return msgspec.structs.replace(event, session_id=session_id)
    return event
