"""`ServedState`: every pair of phase and event, legal or a 409, and what each publishes."""

from __future__ import annotations

import itertools
from typing import get_args

import pytest

from gemwire.server.session_state import (
    SHOWN,
    TRANSITIONS,
    IllegalTransition,
    Phase,
    ServedEvent,
    ServedState,
)

PHASES: tuple[Phase, ...] = get_args(Phase)
EVENTS: tuple[ServedEvent, ...] = get_args(ServedEvent)

# The whole table, written out: a change to it must change this too.
EXPECTED: dict[tuple[Phase, ServedEvent], Phase] = {
    ("stopped", "start"): "starting",
    ("stopped", "continue"): "continuing",
    ("stopped", "ready"): "idle",
    ("stopped", "prompt"): "claimed",
    ("stopped", "release"): "stopped",
    ("stopped", "stop"): "stopped",
    ("stopped", "exited"): "stopped",
    ("stopped", "close"): "closed",
    ("stopped", "crashed"): "stopped",
    ("starting", "ready"): "idle",
    ("starting", "stop"): "stopping",
    ("starting", "exited"): "stopped",
    ("starting", "close"): "closed",
    ("continuing", "ready"): "claimed",
    ("continuing", "stop"): "stopping",
    ("continuing", "exited"): "stopped",
    ("continuing", "close"): "closed",
    ("idle", "prompt"): "claimed",
    ("idle", "stop"): "stopping",
    ("idle", "exited"): "stopped",
    ("idle", "close"): "closed",
    ("claimed", "turn_begun"): "running",
    ("claimed", "release"): "idle",
    ("claimed", "stop"): "stopping",
    ("claimed", "exited"): "stopped",
    ("claimed", "close"): "closed",
    ("running", "cancel"): "cancelling",
    ("running", "turn_ended"): "idle",
    ("running", "stop"): "stopping",
    ("running", "exited"): "stopped",
    ("running", "close"): "closed",
    ("cancelling", "cancel"): "cancelling",
    ("cancelling", "turn_ended"): "idle",
    ("cancelling", "stop"): "stopping",
    ("cancelling", "exited"): "stopped",
    ("cancelling", "close"): "closed",
    ("stopping", "ready"): "stopping",
    ("stopping", "release"): "stopping",
    ("stopping", "cancel"): "stopping",
    ("stopping", "turn_ended"): "stopping",
    ("stopping", "stop"): "stopping",
    ("stopping", "exited"): "stopped",
    ("stopping", "close"): "closed",
    ("closed", "stop"): "closed",
    ("closed", "exited"): "closed",
}


def test_the_table_is_exactly_the_expected_one() -> None:
    assert dict(TRANSITIONS) == EXPECTED


@pytest.mark.parametrize(("phase", "event"), list(itertools.product(PHASES, EVENTS)))
def test_every_pair_of_phase_and_event(phase: Phase, event: ServedEvent) -> None:
    published: list[tuple[str, str | None]] = []
    state = ServedState("s_1", lambda status, detail: published.append((status, detail)))
    state.phase = phase
    before = state.status = SHOWN[phase] or "idle"
    if (phase, event) not in EXPECTED:
        with pytest.raises(IllegalTransition) as raised:
            state.handle(event, "why")
        assert (raised.value.status, raised.value.kind) == (409, "conflict")
        assert (state.phase, state.status, published) == (phase, before, [])
        return
    state.handle(event, "why")
    after = EXPECTED[phase, event]
    assert state.phase == after
    shown = SHOWN[after]
    if event == "crashed":
        assert published == [("stopped", "why")]
    elif shown is None or shown == before:
        assert (published, state.status) == ([], before)
    else:
        detail = "why" if shown == "stopped" else None
        assert (published, state.status) == ([(shown, detail)], shown)


def test_illegal_transitions_say_what_a_client_did_wrong() -> None:
    state = ServedState("s_1", lambda status, detail: None)
    with pytest.raises(IllegalTransition, match=r"^no turn runs in session s_1$"):
        state.cancel()
    state.handle("ready")
    state.handle("prompt")
    with pytest.raises(IllegalTransition, match=r"^a turn is running in session s_1$"):
        state.handle("prompt")
    state.handle("close")
    with pytest.raises(IllegalTransition, match=r"^session s_1 is closed$"):
        state.handle("prompt")


def test_a_stop_keeps_its_first_reason_and_the_status_shown_until_exited() -> None:
    published: list[tuple[str, str | None]] = []
    state = ServedState("s_1", lambda status, detail: published.append((status, detail)))
    for event in ("start", "ready", "prompt", "turn_begun"):
        state.handle(event)
    state.handle("stop", "idle timeout")
    state.handle("stop", "server shutdown")
    assert (state.status, state.stop_reason, state.busy) == ("running", "idle timeout", True)
    state.handle("turn_ended")
    assert (state.status, state.busy) == ("running", False)
    state.exited("the agent exited")
    assert published[-1] == ("stopped", "idle timeout")
    state.handle("start")
    assert state.stop_reason is None


def test_a_delete_while_live_ends_closed_without_a_stopped_first() -> None:
    published: list[str] = []
    state = ServedState("s_1", lambda status, detail: published.append(status))
    state.handle("start")
    state.handle("ready")
    state.handle("stop", "closed")
    state.exited("the agent exited")
    assert published == ["starting", "idle", "closed"]


def test_cancel_is_sent_once_per_turn() -> None:
    state = ServedState("s_1", lambda status, detail: None)
    for event in ("ready", "prompt", "turn_begun"):
        state.handle(event)
    assert [state.cancel(), state.cancel()] == [True, False]
    state.handle("turn_ended")
    state.handle("prompt")
    state.handle("turn_begun")
    assert state.cancel() is True
