"""The live view and the plain transcript say the same things: both word them with
`gemwire.cli.presenter` (they used to disagree on cached tokens, option names, --verbose)."""

from __future__ import annotations

import io
from collections.abc import Sequence

from rich.console import Console, RenderableType

from gemwire.cli.transcript import Transcript
from gemwire.cli.view import View
from gemwire.events import (
    Event,
    MessageDelta,
    PermissionOption,
    PermissionRequested,
    PermissionResolved,
    PlanEntry,
    PlanUpdated,
    SessionStarted,
    ThoughtDelta,
    TokenUsage,
    ToolCallFinished,
    ToolCallStarted,
    TurnCompleted,
    TurnError,
)

AGENT = "acp:demo"
OPTIONS = [
    PermissionOption(option_id="proceed_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="cancel", name="Reject", kind="reject_once"),
]


def live(events: Sequence[Event], *, verbose: bool = False) -> list[str]:
    view = View(verbose=verbose)
    blocks: list[RenderableType] = []
    for event in events:
        blocks += view.apply(event)
    blocks += view.close()
    out = io.StringIO()
    console = Console(file=out, width=100, color_system=None)
    for block in blocks:
        console.print(block)
    return [line.rstrip() for line in out.getvalue().splitlines()]


def plain(events: Sequence[Event], *, verbose: bool = False) -> list[str]:
    out = io.StringIO()
    transcript = Transcript(out, verbose=verbose)
    for event in events:
        transcript.write(event)
    return out.getvalue().splitlines()


def turn(usage: TokenUsage | None = None, error: TurnError | None = None) -> TurnCompleted:
    return TurnCompleted(
        agent=AGENT,
        ok=error is None,
        stop_reason="end_turn" if error is None else "error",
        error=error,
        answer="",
        usage=usage,
        duration_ms=1500,
    )


def usage(cached: int | None) -> TokenUsage:
    return TokenUsage(input_tokens=10, output_tokens=5, cached_tokens=cached, total_tokens=15)


def test_cached_tokens_show_in_both_only_when_some_were() -> None:
    for cached, said in [(None, ""), (0, ""), (4, " · 4 cached")]:
        figures = f"15 tokens (10 in · 5 out{said}) · 1.5 s"
        assert live([turn(usage(cached))])[-1] == f"✓ done · {figures}"
        assert plain([turn(usage(cached))]) == [f"-- ok (end_turn) · {figures}"]


def test_both_count_tool_calls_and_files_and_give_the_exit_code() -> None:
    events: list[Event] = [
        ToolCallStarted(agent=AGENT, call_id="c1", name="shell", kind="execute", title="make"),
        ToolCallFinished(agent=AGENT, call_id="c1", status="completed"),
        turn(error=TurnError(kind="auth", message="no key", exit_code=41)),
    ]
    assert live(events)[-2:] == [
        "✗ failed (error) · 1 tool call · 1.5 s",
        "  auth: no key (exit code 41)",
    ]
    assert (
        plain(events)[-1] == "-- FAILED (error) · auth: no key (exit code 41) · 1 tool call · 1.5 s"
    )


def test_both_name_the_options_and_the_call_a_permission_is_for() -> None:
    events: list[Event] = [
        ToolCallStarted(agent=AGENT, call_id="c1", name="write_file", kind="edit", title="a.txt"),
        PermissionRequested(agent=AGENT, request_id="r1", call_id="c1", options=OPTIONS),
        PermissionResolved(agent=AGENT, request_id="r1", call_id="c1", option_id="proceed_once"),
        PermissionRequested(agent=AGENT, request_id="r2", options=OPTIONS),
        PermissionResolved(agent=AGENT, request_id="r2"),
    ]
    assert live(events)[:4] == [
        "? permission asked for a.txt: Allow once, Reject",
        "    → Allow once",
        "? permission asked: Allow once, Reject",
        "    → cancelled",
    ]
    assert plain(events)[1:] == [
        "  ? permission asked for a.txt: Allow once, Reject",
        "  ? permission: Allow once",
        "  ? permission asked: Allow once, Reject",
        "  ? permission: cancelled",
    ]


def test_both_preview_a_command_s_last_lines_and_show_all_when_verbose() -> None:
    output = "\n".join(f"line {n}" for n in range(1, 10))
    events: list[Event] = [
        ToolCallStarted(agent=AGENT, call_id="c1", name="shell", kind="execute", title="make"),
        ToolCallFinished(agent=AGENT, call_id="c1", status="completed", output=output),
    ]
    shown = ["… 3 earlier lines", *(f"line {n}" for n in range(4, 10))]
    assert live(events)[1:] == [f"    {line}" for line in shown]
    assert plain(events)[1:] == ["  -> ok", *(f"  | {line}" for line in shown)]
    every = [f"line {n}" for n in range(1, 10)]
    assert live(events, verbose=True)[1:] == [f"    {line}" for line in every]
    assert plain(events, verbose=True)[2:] == [f"  | {line}" for line in every]


def test_a_session_without_a_model_says_nothing_of_one() -> None:
    started = SessionStarted(agent=AGENT, session_id="s1")
    assert live([started]) == ["acp:demo · session s1"]
    assert plain([started]) == ["session s1"]


def test_the_plan_ends_both_before_the_outcome() -> None:
    plan = PlanUpdated(
        agent=AGENT,
        entries=[
            PlanEntry(content="write notes", status="completed"),
            PlanEntry(content="review", status="in_progress"),
            PlanEntry(content="ship", status="pending"),
        ],
    )
    marks = ["  ✓ write notes", "  ▸ review", "  ○ ship"]
    assert live([plan, turn()]) == ["Plan", *marks, "", "✓ done · 1.5 s"]
    assert plain([plan, turn()]) == ["plan:", *marks, "-- ok (end_turn) · 1.5 s"]


def test_reasoning_is_marked_once_and_the_answer_starts_a_line_of_its_own() -> None:
    events: list[Event] = [
        ThoughtDelta(agent=AGENT, text="Looking "),
        ThoughtDelta(agent=AGENT, text="around."),
        MessageDelta(agent=AGENT, text="Done"),
        MessageDelta(agent=AGENT, text=" here."),
        turn(),
    ]
    assert plain(events) == [
        "(thinking) Looking around.",
        "Done here.",
        "-- ok (end_turn) · 1.5 s",
    ]


class Ticks:
    """A clock that moves 5.5 s between its first and its second reading."""

    def __init__(self) -> None:
        self.readings = iter([100.0, 105.5])

    def __call__(self) -> float:
        return next(self.readings)


def test_a_timed_transcript_says_how_long_the_whole_run_took() -> None:
    # Gemini's duration_ms (here 1.5 s) leaves out its start-up; the run took 5.5 s.
    out = io.StringIO()
    transcript = Transcript(out, clock=Ticks())
    transcript.write(turn(usage(None)))
    assert out.getvalue() == "-- ok (end_turn) · 15 tokens (10 in · 5 out) · 5.5 s\n"
    assert plain([turn(usage(None))]) == ["-- ok (end_turn) · 15 tokens (10 in · 5 out) · 1.5 s"]
