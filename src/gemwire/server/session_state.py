"""A served session's status, turn, cancel and stop reason, sans-IO: every transition in
one table.

As in `gemwire.protocol.acp.session_state`, the rules are data: `TRANSITIONS` maps
(phase, event) to the next phase, and a pair that is not in it is an
`IllegalTransition`, a `Conflict` (409). `ServedState` is the only writer of the
session's status, its turn, its cancel and its stop reason, and the only one to publish
a status (through the ``publish`` it is given): it publishes when the status a phase
shows (`SHOWN`) changes.

Phases the API does not show have the status of the phase they come from: a prompt
continuing a stopped session shows ``starting`` (``continuing``), a prompt about to
begin its turn shows ``idle`` (``claimed``), a cancelled turn shows ``running``
(``cancelling``), and a session asked to stop shows what it showed until it has
(``stopping``).

    >>> shown = []
    >>> state = ServedState("s_1", lambda status, detail: shown.append(status))
    >>> state.handle("start"); state.handle("ready"); state.handle("prompt")
    >>> state.handle("turn_begun"); state.cancel(), state.cancel()
    (True, False)
    >>> state.handle("turn_ended"); shown
    ['starting', 'idle', 'running', 'idle']
    >>> state.handle("turn_ended")
    Traceback (most recent call last):
    gemwire.server.session_state.IllegalTransition: session s_1: turn_ended while idle
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Literal

from gemwire.server.envelopes import Status
from gemwire.server.responses import Conflict

__all__ = ("SHOWN", "TRANSITIONS", "IllegalTransition", "Phase", "ServedEvent", "ServedState")

Phase = Literal[
    "stopped",
    "starting",
    "continuing",
    "idle",
    "claimed",
    "running",
    "cancelling",
    "stopping",
    "closed",
]
"""``stopped``: no agent. ``starting``: its agent is starting (a new session, or a
settings request continuing a stopped one). ``continuing``: a prompt continues a stopped
session (its turn begins once the agent is ready). ``idle``: ready for a prompt.
``claimed``: a prompt was taken, its turn not begun yet. ``running``: a turn runs.
``cancelling``: it was asked to cancel. ``stopping``: the session was asked to stop (its
turn, if one runs, ends first). ``closed``: deleted, for good."""

ServedEvent = Literal[
    "start",
    "continue",
    "ready",
    "prompt",
    "release",
    "turn_begun",
    "cancel",
    "turn_ended",
    "stop",
    "exited",
    "close",
    "crashed",
]
"""``start``/``continue``: its agent starts (``continue``: for a prompt). ``ready``: it
started. ``prompt``: a prompt is taken. ``release``: the prompt failed before its turn
began. ``turn_begun``/``turn_ended``: a turn. ``cancel``: a client cancels the turn.
``stop``: stop the session (idle timeout, shutdown, a failed log, a delete).
``exited``: its agent is gone (or a ``gemini-stream`` session's stop is done).
``close``: deleted. ``crashed``: found mid-turn in its log when loaded (the server died)."""

_LIVE: tuple[Phase, ...] = (
    "starting",
    "continuing",
    "idle",
    "claimed",
    "running",
    "cancelling",
    "stopping",
)

TRANSITIONS: Mapping[tuple[Phase, ServedEvent], Phase] = {
    ("stopped", "start"): "starting",
    ("stopped", "continue"): "continuing",
    ("stopped", "ready"): "idle",  # a new gemini-stream session: no agent to start
    ("stopped", "prompt"): "claimed",  # gemini-stream: each turn is a run of its own
    ("stopped", "stop"): "stopped",  # nothing runs
    ("stopped", "exited"): "stopped",  # an agent that never started
    ("stopped", "close"): "closed",
    ("stopped", "crashed"): "stopped",
    ("starting", "ready"): "idle",
    ("continuing", "ready"): "claimed",
    ("idle", "prompt"): "claimed",
    ("claimed", "turn_begun"): "running",
    ("claimed", "release"): "idle",
    ("stopped", "release"): "stopped",  # its agent stopped as it was starting
    ("running", "cancel"): "cancelling",
    ("cancelling", "cancel"): "cancelling",  # sent once
    ("running", "turn_ended"): "idle",
    ("cancelling", "turn_ended"): "idle",
    ("stopping", "turn_ended"): "stopping",
    ("stopping", "cancel"): "stopping",
    ("stopping", "ready"): "stopping",  # it started as it was asked to stop
    ("stopping", "release"): "stopping",
    ("closed", "stop"): "closed",
    ("closed", "exited"): "closed",
    **{(phase, "stop"): "stopping" for phase in _LIVE},
    **{(phase, "exited"): "stopped" for phase in _LIVE},
    **{(phase, "close"): "closed" for phase in _LIVE},
}
"""Every legal transition; a second prompt, a cancel with no turn, anything after
``closed`` but a stop are not."""

SHOWN: Mapping[Phase, Status | None] = {
    "stopped": "stopped",
    "starting": "starting",
    "continuing": "starting",
    "idle": "idle",
    "claimed": "idle",
    "running": "running",
    "cancelling": "running",
    "stopping": None,  # what it showed, until it has stopped
    "closed": "closed",
}
"""The status each phase shows (``None``: the one it showed before)."""

_TURN: frozenset[Phase] = frozenset({"continuing", "claimed", "running", "cancelling"})


class IllegalTransition(Conflict):
    """An event the session's phase does not allow (a second prompt, a cancel with no
    turn, a prompt to a closed session): a 409."""

    def __init__(self, session_id: str, phase: Phase, event: ServedEvent) -> None:
        if event in ("prompt", "continue") and phase in _TURN:
            message = f"a turn is running in session {session_id}"
        elif event == "cancel":
            message = f"no turn runs in session {session_id}"
        elif phase == "closed":
            message = f"session {session_id} is closed"
        else:
            message = f"session {session_id}: {event} while {phase}"
        super().__init__(message)
        self.phase: Phase = phase
        self.event: ServedEvent = event


class ServedState:
    """One served session's phase; ``publish(status, detail)`` is called for each status
    it shows (see the module docstring)."""

    def __init__(
        self,
        session_id: str,
        publish: Callable[[Status, str | None], None],
        *,
        closed: bool = False,
    ) -> None:
        self.session_id = session_id
        self._publish = publish
        self.phase: Phase = "closed" if closed else "stopped"
        self.status: Status = "closed" if closed else "stopped"
        self.stop_reason: str | None = None
        """Why it was asked to stop (the first reason counts), until it starts again."""
        self.turn = False
        """A turn has begun and not ended (also while the session is stopping)."""

    @property
    def busy(self) -> bool:
        """A turn runs, or a prompt is starting one."""
        return self.turn or self.phase in _TURN

    @property
    def cancelling(self) -> bool:
        return self.phase == "cancelling"

    def handle(self, event: ServedEvent, detail: str | None = None) -> None:
        """Apply ``event`` (raises `IllegalTransition`); ``detail``: why, for a status
        ``stopped``."""
        after = TRANSITIONS.get((self.phase, event))
        if after is None:
            raise IllegalTransition(self.session_id, self.phase, event)
        if event in ("start", "continue"):
            self.stop_reason = None
        elif event == "stop" and self.stop_reason is None and after == "stopping":
            self.stop_reason = detail
        elif event == "turn_begun":
            self.turn = True
        elif event in ("turn_ended", "exited", "close", "crashed"):
            self.turn = False
        self.phase = after
        shown = SHOWN[after]
        if event == "crashed" or (shown is not None and shown != self.status):
            self.status = shown or self.status
            self._publish(self.status, detail if self.status == "stopped" else None)

    def cancel(self) -> bool:
        """A client cancels the turn: whether to send the agent its cancel now (once)."""
        before = self.phase
        self.handle("cancel")
        return before == "running"

    def exited(self, detail: str) -> None:
        """Its agent is gone: ``closed`` if a delete stopped it, else ``stopped`` with the
        reason it was asked to stop, else ``detail``."""
        if self.stop_reason == "closed":
            self.handle("close")
        else:
            self.handle("exited", self.stop_reason or detail)
