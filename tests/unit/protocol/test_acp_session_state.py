"""The session state table (protocol/acp/session_state.py): every pair, and any sequence."""

from __future__ import annotations

from typing import get_args

import pytest
from hypothesis import given, strategies as st

from gemwire.errors import GemwireError
from gemwire.protocol.acp import (
    TRANSITIONS,
    AcpSessionState,
    IllegalTransition,
    SessionEvent,
    SessionPhase,
)

EVENTS: tuple[SessionEvent, ...] = get_args(SessionEvent)


def test_the_table_names_exactly_these_legal_pairs() -> None:
    assert sorted(TRANSITIONS) == sorted(
        [
            ("idle", "prompt"),
            ("idle", "cancel"),
            ("prompting", "cancel"),
            ("prompting", "turn_ended"),
            ("cancelling", "cancel"),
            ("cancelling", "turn_ended"),
        ]
    )


@pytest.mark.parametrize(
    ("phase", "event", "message"),
    [
        ("prompting", "prompt", "session s already has a turn running"),
        ("cancelling", "prompt", "session s already has a turn running"),
        ("idle", "turn_ended", "session s: turn_ended while idle"),
    ],
)
def test_an_illegal_transition_is_a_typed_error_and_changes_nothing(
    phase: SessionPhase, event: SessionEvent, message: str
) -> None:
    state = AcpSessionState("s")
    state.phase = phase
    with pytest.raises(IllegalTransition) as raised:
        state.handle(event)
    assert (str(raised.value), raised.value.phase, raised.value.event) == (message, phase, event)
    assert isinstance(raised.value, GemwireError)
    assert state.phase == phase


@given(st.lists(st.sampled_from(EVENTS), max_size=40))
def test_any_sequence_follows_the_table_and_cancels_once_per_turn(
    events: list[SessionEvent],
) -> None:
    state = AcpSessionState("s")
    sent_this_turn = 0
    for event in events:
        before = state.phase
        expected = TRANSITIONS.get((before, event))
        if expected is None:
            with pytest.raises(IllegalTransition):
                state.handle(event)
            assert state.phase == before
            continue
        if event == "cancel":
            sent = state.cancel()
            assert sent == (before == "prompting")  # only for a running turn
            sent_this_turn += sent
        else:
            state.handle(event)
            sent_this_turn = 0
        assert sent_this_turn <= 1  # session/cancel goes out once per turn
        assert state.phase == expected
        assert state.cancelling == (expected == "cancelling")
