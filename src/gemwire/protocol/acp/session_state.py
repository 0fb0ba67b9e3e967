"""One ACP session's turn and cancel state, sans-IO: every transition in one table.

As in h11, the rules are data: `TRANSITIONS` maps (phase, event) to the next phase, and
a pair that is not in it is an `IllegalTransition` (a typed error, never a silent
fix-up). A session runs one turn at a time; ``session/cancel`` is sent once per turn,
only while it runs; a cancel with no turn running does nothing.

    >>> state = AcpSessionState("s1")
    >>> state.begin_turn(); state.cancel(), state.cancel(), state.phase
    (True, False, 'cancelling')
    >>> state.end_turn(); state.phase
    'idle'
    >>> state.end_turn()
    Traceback (most recent call last):
    gemwire.protocol.acp.session_state.IllegalTransition: session s1: turn_ended while idle
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from gemwire.errors import GemwireError

__all__ = (
    "TRANSITIONS",
    "AcpSessionState",
    "IllegalTransition",
    "SessionEvent",
    "SessionPhase",
)


SessionPhase = Literal["idle", "prompting", "cancelling"]
"""``idle``: no turn runs. ``prompting``: ``session/prompt`` sent, not answered.
``cancelling``: ``session/cancel`` sent too, the turn not ended yet."""

SessionEvent = Literal["prompt", "cancel", "turn_ended"]
"""``prompt``: a turn begins. ``cancel``: the caller (or a timeout) cancels.
``turn_ended``: the turn ended, however (answer, error, crash, the client's stop)."""

TRANSITIONS: Mapping[tuple[SessionPhase, SessionEvent], SessionPhase] = {
    ("idle", "prompt"): "prompting",
    ("idle", "cancel"): "idle",  # nothing to cancel
    ("prompting", "cancel"): "cancelling",  # send session/cancel
    ("prompting", "turn_ended"): "idle",
    ("cancelling", "cancel"): "cancelling",  # already sent: not again
    ("cancelling", "turn_ended"): "idle",
}
"""Every legal transition; ``prompt`` while a turn runs and ``turn_ended`` with none
running are not."""


class IllegalTransition(GemwireError):
    """An event the session's phase does not allow (e.g. a second turn at once)."""

    def __init__(self, session_id: str, phase: SessionPhase, event: SessionEvent) -> None:
        message = (
            f"session {session_id} already has a turn running"
            if event == "prompt"
            else f"session {session_id}: {event} while {phase}"
        )
        super().__init__(message)
        self.session_id = session_id
        self.phase: SessionPhase = phase
        self.event: SessionEvent = event


class AcpSessionState:
    """One session's phase; see the module docstring."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.phase: SessionPhase = "idle"

    def handle(self, event: SessionEvent) -> SessionPhase:
        """Apply ``event``; the phase it left (raises `IllegalTransition`)."""
        before = self.phase
        after = TRANSITIONS.get((before, event))
        if after is None:
            raise IllegalTransition(self.session_id, before, event)
        self.phase = after
        return before

    def begin_turn(self) -> None:
        self.handle("prompt")

    def cancel(self) -> bool:
        """Whether to send ``session/cancel`` now (once per running turn)."""
        return self.handle("cancel") == "prompting"

    @property
    def cancelling(self) -> bool:
        return self.phase == "cancelling"

    def end_turn(self) -> None:
        self.handle("turn_ended")
