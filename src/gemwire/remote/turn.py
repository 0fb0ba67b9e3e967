"""One remote turn: a prompt posted, then the session's stream up to its ``turn_completed``.

A reader task follows the session's SSE stream (`ApiClient.follow`: reconnecting with
``?after=`` the last seq, so no event is lost or repeated) into a bounded buffer the
caller iterates; a caller slower than the agent holds the stream back, and through it
the agent on the server. The permission requests of the turn are answered by the
session's handler in tasks of their own, as `AcpSession` answers them.

A server that stops the session mid-turn (it is shutting down) ends the turn as
``cancelled``, as a cancel does: a turn cancelled that this client did not cancel is held
until the session's next state says why, and one the server stopped ends as ``crashed``
(the agent went away with it, as an ACP endpoint's closing connection ends a turn), never
as the caller's own cancel. A session the server stopped with no ``turn_completed`` at all
(its log could not be written) ends the turn as ``crashed`` too, with the server's reason.

Leaving the turn early cancels it and reads what is left of it for at most
`DRAIN_TIMEOUT` seconds; a cancel the server refuses (409: no turn runs there) reads
nothing more, and the caller's own cancellation or timeout is never held back.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Self

import anyio
import msgspec
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from gemwire._normalize.notices import notice
from gemwire.errors import GemwireError, RemoteError
from gemwire.events import (
    Event,
    PermissionRequested,
    PermissionResolved,
    ToolCallStarted,
    TurnCompleted,
    TurnError,
    UserMessage,
)
from gemwire.remote.models import Envelope
from gemwire.runners.acp import AcpTurnResult, PermissionRequest, choose_option
from gemwire.runners.turn_result import TurnRecord
from gemwire.serve_api import PermissionAnswer, PermissionAnswered, PromptBody, Prompted
from gemwire.wire import acp

if TYPE_CHECKING:
    from gemwire.remote.session import RemoteSession

__all__ = ("BUFFERED_EVENTS", "RemoteTurn")

BUFFERED_EVENTS = 1000
"""Events read ahead of the caller; then the stream is held back."""
DRAIN_TIMEOUT = 30.0
"""Seconds a turn left early has to end on the server (its cancel sent) before it is
left to itself."""


class RemoteTurn:
    """One prompt and everything the agent does for it, up to its ``turn_completed``
    (from `RemoteSession.prompt`); use it with ``async with`` and iterate it."""

    def __init__(self, session: RemoteSession, body: PromptBody) -> None:
        self.session = session
        self._body = body
        self._after = 0
        self._send: MemoryObjectSendStream[Event]
        self._receive: MemoryObjectReceiveStream[Event]
        self._record = TurnRecord()
        self._calls: dict[str, ToolCallStarted] = {}
        self._earlier: list[Event] = []
        self._other_turn = 0
        self._asking: dict[str, anyio.CancelScope] = {}
        self._reading = anyio.CancelScope()
        self._read = anyio.Event()
        self._failure: RemoteError | None = None
        self._completion: TurnCompleted | None = None
        self._held: TurnCompleted | None = None
        """A turn_completed this client did not cancel, cancelled: why comes next."""
        self._finished = False  # its turn_completed was iterated
        self._result: AcpTurnResult | None = None
        self._started = 0.0
        self._agent: str | None = None
        """The ``agent`` of the turn's events (a turn_completed made here has it too)."""

    @property
    def result(self) -> AcpTurnResult:
        """The outcome; available once the turn has ended."""
        if self._result is None:
            raise GemwireError("the turn has not ended yet: iterate its events first")
        return self._result

    @property
    def done(self) -> bool:
        """The turn ended (its ``turn_completed`` came)."""
        return self._completion is not None

    async def __aenter__(self) -> Self:
        session = self.session
        self._started = time.monotonic()
        session.cancel_asked = False
        accepted = await session.api.call(
            "POST", f"{session.path}/prompt", Prompted, json=self._body
        )
        self._after = accepted.after
        self._send, self._receive = anyio.create_memory_object_stream[Event](BUFFERED_EVENTS)
        session.server.task_group.start_soon(self._follow)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        try:
            if not self._finished and self._completion is None and self._failure is None:
                await self._end_early()
        finally:
            with anyio.CancelScope(shield=True):
                self._reading.cancel()
                await self._read.wait()
                self._receive.close()

    async def _end_early(self) -> None:
        """Cancel the turn and read what is left of it (the next turn starts after it);
        not shielded: the caller's cancellation and timeouts end this too."""
        try:
            with anyio.fail_after(DRAIN_TIMEOUT):
                running = await self.cancel()
        except (RemoteError, TimeoutError):
            return  # the stream below fails too, or the server does not answer
        if not running:
            return  # it ended there: its end is logged (read by now), or never will be
        with anyio.move_on_after(DRAIN_TIMEOUT), contextlib.suppress(RemoteError):
            async for _ in self:
                pass

    def __aiter__(self) -> AsyncIterator[Event]:
        return self

    async def __anext__(self) -> Event:
        if self._finished:
            raise StopAsyncIteration
        try:
            event = await self._receive.receive()
        except anyio.EndOfStream:
            self._finished = True
            if self._failure is not None:
                raise self._failure from self._failure.__cause__
            raise StopAsyncIteration from None
        if event is self._completion:
            self._finished = True
        return event

    async def wait(self) -> AcpTurnResult:
        """Consume the turn's events and return its result."""
        async for _ in self:
            pass
        return self.result

    async def cancel(self) -> bool:
        """Same as ``session.cancel()``: whether a turn ran on the server."""
        return await self.session.cancel()

    async def _follow(self) -> None:
        session = self.session
        try:
            with self._reading:
                await session.api.follow(f"{session.path}/events", session.seen, self._take)
        except RemoteError as exc:
            if self._held is None:
                self._failure = exc
            else:  # the server went away right after ending the turn
                await self._deliver(_stopped(self._held, f"the server went away: {exc}"))
        finally:
            self._send.close()
            self._read.set()

    async def _take(self, envelope: Envelope) -> bool:
        event = envelope.event
        if self._held is not None:
            held, self._held = self._held, None
            state = envelope.state or {}
            if state.get("status") == "stopped":
                self.session.seen = envelope.seq
                detail = state.get("detail") or "stopped"
                why = f"the server stopped the session ({detail})"
                return await self._deliver(_stopped(held, why))
            if event is None:
                self.session.seen = envelope.seq
            return await self._deliver(held)  # cancelled by another client (or the page)
        if (
            isinstance(event, TurnCompleted)
            and envelope.seq > self._after
            and self._unasked_cancel(event)
        ):
            self._held = event
            self.session.seen = envelope.seq
            return False
        self.session.seen = envelope.seq
        if event is None:
            shown = envelope.state or {}
            if envelope.seq > self._after and shown.get("status") in ("stopped", "closed"):
                # Stopped with no turn_completed (its log could not be written): the
                # turn's end will never come.
                reason = str(shown.get("detail") or shown["status"])
                lost = self._lost(f"the server stopped the session ({reason})")
                return await self._deliver(lost)
            return False
        if envelope.seq <= self._after:
            # Logged before this turn, since this client last read: it opens the turn, as
            # locally, less the turns other clients ran meanwhile (`history` has them); a
            # turn's events begin with its prompt's user_message.
            if isinstance(event, TurnCompleted):
                del self._earlier[self._other_turn :]
            else:
                if isinstance(event, UserMessage):
                    self._other_turn = len(self._earlier)
                self._earlier.append(event)
            return False
        for earlier in self._earlier:
            await self._deliver(earlier)
        self._earlier.clear()
        return await self._deliver(event)

    def _lost(self, why: str) -> TurnCompleted:
        """A ``turn_completed`` for a turn whose own will not come."""
        return TurnCompleted(
            agent=self._agent or self.session.info.agent,
            session_id=self.session.session_id,
            ok=False,
            stop_reason="error",
            error=TurnError(kind="crashed", message=f"{why} before the turn ended"),
            answer="",
        )

    def _unasked_cancel(self, turn: TurnCompleted) -> bool:
        """``turn`` was cancelled, and not by this client."""
        cancelled = turn.error is not None and turn.error.kind == "cancelled"
        return cancelled and not self.session.cancel_asked

    async def _deliver(self, event: Event) -> bool:
        """Give ``event`` to the caller; true once it is the turn's ``turn_completed``."""
        self._record.add(event)
        self._agent = event.agent
        if isinstance(event, ToolCallStarted):
            self._calls[event.call_id] = event
        elif isinstance(event, PermissionRequested) and self.session.permission_handler:
            self.session.server.task_group.start_soon(self._answer, event)
        elif isinstance(event, PermissionResolved) and event.request_id in self._asking:
            self._asking[event.request_id].cancel()  # answered elsewhere (a preset, a timeout)
        await self._send.send(event)
        if isinstance(event, TurnCompleted):
            self._completion = event
            self._result = self._finalize(event)
            return True
        return False

    async def _answer(self, event: PermissionRequested) -> None:
        """Ask the handler; only an option the agent offered is ever sent."""
        handler = self.session.permission_handler
        assert handler is not None
        request = self._request(event)
        chosen: str | None = None
        with anyio.CancelScope() as scope:
            self._asking[event.request_id] = scope
            try:
                chosen = await handler(request)
            except Exception as exc:  # noqa: BLE001 - the host's code: deny, and say why
                await self._notice(event, f"the permission handler failed: {exc!r}")
                chosen = choose_option(request.options, allow=False)
            finally:
                del self._asking[event.request_id]
        if scope.cancelled_caught:
            return
        if chosen is not None and chosen not in {o.option_id for o in request.options}:
            message = f"the permission handler chose {chosen!r}, which was not offered; denied"
            await self._notice(event, message)
            chosen = choose_option(request.options, allow=False)
        path = f"{self.session.path}/permissions/{event.request_id}"
        try:
            await self.session.api.call(
                "POST", path, PermissionAnswered, json=PermissionAnswer(option_id=chosen)
            )
        except RemoteError as exc:
            if exc.kind not in ("not_found", "conflict"):  # else: answered already
                await self._notice(event, f"the answer to a permission request failed: {exc}")

    def _request(self, event: PermissionRequested) -> PermissionRequest:
        call_id = event.call_id or ""
        call = self._calls.get(call_id)
        title, kind = (call.title, str(call.kind)) if call is not None else (call_id, "other")
        title, kind = event.title or title, str(event.kind or kind)
        return PermissionRequest(
            request_id=event.request_id,
            session_id=event.session_id or "",
            call_id=call_id,
            title=title,
            kind=kind,
            options=event.options,
            tool_call=acp.ToolCallUpdate(
                tool_call_id=call_id,
                title=title,
                kind=kind,
                raw_input=call.input if call is not None else None,
            ),
            diff=event.diff,
            content=event.content,
        )

    async def _notice(self, event: PermissionRequested, message: str) -> None:
        warning = notice(event.agent, event.session_id, message)
        with anyio.move_on_after(1):  # never stall on a caller that stopped reading
            with contextlib.suppress(anyio.ClosedResourceError):  # the turn ended first
                await self._send.send(warning)

    def _finalize(self, turn: TurnCompleted) -> AcpTurnResult:
        duration = time.monotonic() - self._started
        return AcpTurnResult(
            ok=turn.ok,
            answer=turn.answer,
            error=turn.error,
            stop_reason=turn.stop_reason,
            files_changed=list(self._record.files_changed),
            usage=turn.usage,
            session_id=turn.session_id or self.session.session_id or "",
            duration_s=turn.duration_ms / 1000 if turn.duration_ms is not None else duration,
            notices=list(self._record.notices),
            stderr_tail="",
            exit_code=None,
        )


def _stopped(turn: TurnCompleted, why: str) -> TurnCompleted:
    """``turn``, ended by the server going away rather than by a cancel."""
    error = TurnError(kind="crashed", message=f"{why} before the turn ended")
    return msgspec.structs.replace(turn, ok=False, stop_reason="error", error=error)
