"""A budget ends the events at the one that spent it, however the CLI's output arrives.

On a loaded machine the CLI can write its next tool call (or several) before gemwire reads
the one that spent ``max_tool_calls``: they arrive in one read. The reader stops there,
the normalizer never sees the rest, and the end of the run closes only the calls that
were delivered. Fed the recorded run of the real CLI (four ``list_directory`` calls).
"""

from __future__ import annotations

import itertools

from hypothesis import given, strategies as st
from kit.corpus import RECORDED

from gemwire.events import Event, ToolCallFinished, ToolCallStarted, TurnCompleted, TurnError
from gemwire.runners._gemini_budget import RunBudget
from gemwire.runners._gemini_outputs import StreamJsonReader
from gemwire.runners.gemini_options import GeminiOptions

STDOUT = (RECORDED / "loop_detection" / "stream-json" / "run-1.stdout").read_bytes()
SPENT = "more than 2 tool calls (max_tool_calls)"


def read(
    chunks: list[bytes], max_tool_calls: int | None = None
) -> tuple[list[Event], str | None, list[Event]]:
    """What the runner sends (events up to the stop), why it stopped, and the end."""
    reader = StreamJsonReader(
        RunBudget(GeminiOptions(max_tool_calls=max_tool_calls)), cwd="/w", max_line_bytes=1 << 20
    )
    events: list[Event] = []
    for chunk in chunks:
        fed, why = reader.feed(chunk)
        events += fed
        if why is not None:
            stopped = TurnError(kind="cancelled", message=why)
            return events, why, reader.finish(exit_code=-15, stopped=stopped)
    return events, None, reader.finish(exit_code=0, stopped=None)


def test_the_calls_after_the_one_that_spent_the_budget_are_never_seen() -> None:
    events, why, end = read([STDOUT], max_tool_calls=2)
    assert why == SPENT
    assert [e.type for e in events] == [
        "session_started",
        "user_message",
        "tool_call_started",
        "tool_call_finished",
        "tool_call_started",
        "tool_call_finished",
        "tool_call_started",
    ]
    third = events[-1]
    assert isinstance(third, ToolCallStarted)
    # The end closes the third call, the last one delivered, and only it.
    assert [e.type for e in end] == ["notice", "tool_call_finished", "turn_completed"]
    assert isinstance(end[1], ToolCallFinished)
    assert (end[1].call_id, end[1].status) == (third.call_id, "cancelled")
    assert isinstance(end[2], TurnCompleted)
    assert end[2].error is not None
    assert (end[2].error.kind, end[2].error.message) == ("cancelled", SPENT)


def test_without_a_budget_every_call_is_delivered() -> None:
    events, why, end = read([STDOUT])
    assert why is None
    assert sum(isinstance(e, ToolCallStarted) for e in events) == 4
    assert [e.type for e in end] == []  # the recorded result completed the turn


@given(st.sets(st.integers(1, len(STDOUT) - 1), max_size=20))
def test_the_stop_is_the_same_however_the_output_is_split(cuts: set[int]) -> None:
    bounds = [0, *sorted(cuts), len(STDOUT)]
    chunks = [STDOUT[a:b] for a, b in itertools.pairwise(bounds)]
    assert read(chunks, max_tool_calls=2) == read([STDOUT], max_tool_calls=2)
