"""One turn: a prompt and everything the agent does for it, up to its ``turn_completed``.

A turn reads its session's queue: first whatever came before it (``session_started``, a
loaded session's replay), then its own events, up to exactly one ``turn_completed`` —
whatever happens (agent error, crash, cancel, timeout, the caller leaving early). For
its result it keeps a `TurnRecord` (files changed, notices), not every event.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Self

import anyio

from gemwire.errors import AgentCrashed, AgentRequestFailed, GemwireError
from gemwire.events import Event, TurnCompleted, TurnError
from gemwire.protocol import acp as protocol
from gemwire.runners._session_follower import with_model_estimates
from gemwire.runners.acp.errors import turn_error
from gemwire.runners.acp.options import AcpTurnResult
from gemwire.runners.acp.peer import Pending
from gemwire.runners.turn_result import TurnRecord
from gemwire.wire import acp

if TYPE_CHECKING:
    from gemwire.runners.acp.session import AcpSession

__all__ = ("CANCEL_GRACE", "AcpTurn")

CANCEL_GRACE = 10.0
"""Seconds an agent has to end a cancelled turn before the client ends it itself."""


_CALLER_STOPPED = "the caller stopped the turn"


class _TurnStopped(GemwireError):
    """The client ended a turn the agent did not end."""


class AcpTurn:
    """One prompt and everything the agent does for it, up to its ``turn_completed``."""

    def __init__(self, session: AcpSession, blocks: list[acp.ContentBlock]) -> None:
        self.session = session
        self.prompt = blocks
        self._context = session.context
        self._record = TurnRecord()
        self._completion: TurnCompleted | None = None
        self._finished = False  # its turn_completed was iterated
        self._done = anyio.Event()
        self._pending: Pending[acp.PromptResponse] | None = None
        self._stopped: TurnError | None = None
        self._result: AcpTurnResult | None = None
        self._started = 0.0

    @property
    def result(self) -> AcpTurnResult:
        """The outcome; available once the turn has ended."""
        if self._result is None:
            raise GemwireError("the turn has not ended yet: iterate its events first")
        return self._result

    @property
    def done(self) -> bool:
        """The turn ended (its ``turn_completed`` is queued)."""
        return self._done.is_set()

    async def __aenter__(self) -> Self:
        session = self.session
        session.state.begin_turn()
        session.turn = session.reader = self
        self._started = time.monotonic()
        session.emit(session.normalizer.prompt_sent(self.prompt))
        call = protocol.prompt(acp.PromptRequest(session_id=session.session_id, prompt=self.prompt))
        try:
            self._pending = await self._context.peer.send(call)
        except AgentCrashed as exc:
            self._pending = Pending(-1, call.method)
            self._pending.resolve(error=exc)
        except BaseException:
            session.turn = session.reader = None
            session.state.end_turn()
            raise
        self._context.task_group.start_soon(self._run)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        with anyio.CancelScope(shield=True):
            if not self._done.is_set():
                await self.stop(_CALLER_STOPPED)
            if not self._finished:
                # The caller left early: what is left of this turn is nobody's; the next
                # turn starts with its own events.
                self.session.queue.discard_through(self._completion)
            self.session.reader = None
            self._context.wake()

    def __aiter__(self) -> AsyncIterator[Event]:
        return self

    async def __anext__(self) -> Event:
        if self._finished:
            raise StopAsyncIteration
        event = await self.session.queue.get()
        if event is self._completion:
            self._finished = True
        return event

    async def wait(self) -> AcpTurnResult:
        """Consume the turn's events and return its result."""
        async for _ in self:
            pass
        return self.result

    async def cancel(self) -> None:
        """Same as ``session.cancel()``."""
        await self.session.cancel()

    def record(self, events: Sequence[Event]) -> None:
        for event in events:
            self._record.add(event)

    def watch_cancel(self) -> None:
        """End the turn ourselves if the agent ignores the cancel for `CANCEL_GRACE`;
        called once per turn, when the session's state says to send ``session/cancel``."""
        if not self._done.is_set():
            self._context.task_group.start_soon(self._end_if_ignored)

    async def stop(self, reason: str) -> None:
        """Cancel the turn (error kind ``cancelled``) and wait for it to end."""
        if self._stopped is None:
            self._stopped = TurnError(kind="cancelled", message=reason)
        await self.session.cancel()
        await self._done.wait()

    async def _end_if_ignored(self) -> None:
        await anyio.sleep(CANCEL_GRACE)
        pending = self._pending
        if pending is not None and not pending.done:
            message = f"the agent did not end the cancelled turn within {CANCEL_GRACE:g} s"
            self.session.emit([self._context.notice(message, self.session.session_id)])
            await self._context.peer.abandon(pending, _TurnStopped(message))

    async def _run(self) -> None:
        try:
            response, error = await self._outcome()
        except anyio.get_cancelled_exc_class():
            # The scope around the whole client was cancelled (the caller's deadline, Ctrl-C):
            # nothing will answer the prompt any more, and whoever waits for the turn must
            # not wait for ever.
            stopped = TurnError(kind="cancelled", message=_CALLER_STOPPED)
            self._end(None, self._stopped or stopped)
            raise
        self._end(response, error)

    async def _outcome(self) -> tuple[acp.PromptResponse | None, TurnError | None]:
        pending = self._pending
        assert pending is not None
        timeout = self._context.options.timeout
        with anyio.move_on_after(timeout):
            await pending.wait()
        if not pending.done:
            self._stopped = self._stopped or TurnError(
                kind="timeout", message=f"the turn took longer than {timeout:g} s"
            )
            await self.session.cancel()
            await pending.wait()
        error = self._stopped
        failure = pending.error
        if isinstance(failure, AgentRequestFailed):
            return None, error or turn_error(failure)
        if isinstance(failure, AgentCrashed):
            return None, turn_error(failure)
        if failure is not None:
            return None, error or TurnError(kind="cancelled", message=str(failure))
        if error is None or error.kind != "timeout":
            return pending.outcome(), error
        return None, error

    def _end(self, response: acp.PromptResponse | None, error: TurnError | None) -> None:
        session = self.session
        duration = int((time.monotonic() - self._started) * 1000)
        events = session.normalizer.finish(response, error=error, duration_ms=duration)
        completed = events[-1]
        assert isinstance(completed, TurnCompleted)
        events[-1] = with_model_estimates(completed, session.current_model)
        completion = session.emit(events)[-1]  # as queued: __anext__ knows it by identity
        assert isinstance(completion, TurnCompleted)
        self._completion = completion
        session.turn = None
        session.state.end_turn()
        self._finalize(completion)
        self._done.set()

    def _finalize(self, turn: TurnCompleted) -> None:
        peer = self._context.peer
        self._result = AcpTurnResult(
            ok=turn.ok,
            answer=turn.answer,
            error=turn.error,
            stop_reason=turn.stop_reason,
            files_changed=list(self._record.files_changed),
            usage=turn.usage,
            session_id=self.session.session_id,
            duration_s=time.monotonic() - self._started,
            notices=list(self._record.notices),
            stderr_tail=peer.stderr_tail,
            exit_code=peer.exit_code if peer.gone else None,
        )
