"""Snapshot tests of the live view's renderer: events in, exactly what a person reads out."""

from __future__ import annotations

import io
from collections.abc import Sequence

from hypothesis import given
from kit.corpus import RECORDED
from kit.hostile import texts
from rich.console import Console, RenderableType
from rich.text import Text

from gemwire import replay_gemini_stream
from gemwire.cli import render
from gemwire.cli.presenter import Tally
from gemwire.cli.view import View, split_settled
from gemwire.events import (
    Event,
    FileChanged,
    Location,
    MessageDelta,
    Notice,
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
    ToolCallUpdated,
    ToolError,
    TurnCompleted,
    TurnError,
    Unknown,
    UsageReported,
    UserMessage,
)

CWD = "/work/space"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def text(*blocks: RenderableType, width: int = 80) -> str:
    """What a person reads: no colour, trailing spaces (Markdown pads) dropped."""
    out = io.StringIO()
    console = Console(file=out, width=width, color_system=None)
    for block in blocks:
        console.print(block)
    output = out.getvalue()
    return "\n".join(line.rstrip() for line in output.split("\n"))


def styled(*blocks: RenderableType) -> str:
    out = io.StringIO()
    console = Console(file=out, width=80, color_system="standard", force_terminal=True)
    for block in blocks:
        console.print(block)
    return out.getvalue()


def play(
    view: View, clock: Clock, events: Sequence[Event], step: float = 0.5
) -> list[RenderableType]:
    blocks: list[RenderableType] = []
    for event in events:
        clock.now += step
        blocks += view.apply(event)
    return blocks


def recorded(case: str) -> list[Event]:
    data = (RECORDED / case / "stream-json" / "run-1.stdout").read_bytes()
    return list(replay_gemini_stream([data], cwd=CWD))


def test_a_recorded_run_reads_as_cards_text_files_and_the_outcome() -> None:
    clock = Clock()
    view = View(cwd=CWD, clock=clock)
    blocks = play(view, clock, recorded("write_and_shell"))
    blocks += view.close(resume="gemini --resume 53c90d0d-c4db-4ac7-bbf5-74a054bb88e1")
    assert text(*blocks) == (
        "gemini · model auto · session 53c90d0d-c4db-4ac7-bbf5-74a054bb88e1\n"
        "> write hello.txt and show it\n"
        "\n"
        "I'll write the file.\n"
        "\n"
        "✓ ✎ write_file  hello.txt                                                  0.5 s\n"
        "    written  hello.txt\n"
        "✓ ▶ run_shell_command  cat hello.txt; echo oops >&2; exit 3                0.5 s\n"
        "    hi there\n"
        "    oops\n"
        "\n"
        "Done. File written.\n"
        "\n"
        "Files changed (1)\n"
        "    written  hello.txt\n"
        "\n"
        # The whole run as the clock saw it (12 events, 0.5 s apart), not the 0.3 s the
        # CLI reports: Gemini's duration_ms leaves out its start-up.
        "✓ done · 2 tool calls · 1 file changed · 332 tokens (301 in · 31 out) · 6.0 s\n"
        "↻ resume: gemini --resume 53c90d0d-c4db-4ac7-bbf5-74a054bb88e1\n"
    )


def test_a_failed_turn_says_why_with_the_exit_code() -> None:
    view = View(cwd=CWD)
    play(view, Clock(), recorded("max_session_turns"))
    assert text(*view.close(), width=100).split("\n")[-4:] == [
        "✗ failed (max_turn_requests) · 1 tool call · 112 tokens (101 in · 11 out)",
        "  turn_limit: Reached max session turns for this session. Increase the number of turns by specifying",
        "  maxSessionTurns in settings.json.",
        "",
    ]


def test_without_a_clock_nothing_is_timed() -> None:
    view = View(cwd=CWD)
    blocks = play(view, Clock(), recorded("tool_error_missing_file"))
    assert text(*blocks).split("\n")[2:4] == [
        "✗ ≡ read_file  missing.txt",
        "    file_not_found: File not found: __WORKSPACE__/missing.txt",  # as recorded
    ]


def start(call_id: str, name: str, kind: str, title: str) -> ToolCallStarted:
    locations = [Location(path=title)] if title.startswith("/") else []
    return ToolCallStarted(
        agent="acp:demo", call_id=call_id, name=name, kind=kind, title=title, locations=locations
    )


def test_the_moving_part_streams_text_runs_cards_and_keeps_a_footer() -> None:
    clock = Clock()
    view = View(cwd=CWD, clock=clock)
    settled = play(
        view,
        clock,
        [
            SessionStarted(agent="acp:demo", session_id="s1", model="pro", agent_version="1.2"),
            UserMessage(agent="acp:demo", text="tidy up"),
            MessageDelta(agent="acp:demo", text="First paragraph.\n\nSecond, still go"),
        ],
    )
    assert text(*settled) == (
        "acp:demo 1.2 · model pro · session s1\n> tidy up\n\nFirst paragraph.\n"
    )
    assert text(view.moving()) == "Second, still go\n⠴ working · 1.5 s\n"
    settled = play(
        view,
        clock,
        [
            start("c1", "shell", "execute", "make test"),
            ToolCallUpdated(
                agent="acp:demo",
                call_id="c1",
                status="in_progress",
                content="ok 1\nok 2\nok 3\nok 4",
            ),
            UsageReported(
                agent="acp:demo",
                usage=TokenUsage(input_tokens=10, output_tokens=5, total_tokens=15),
            ),
        ],
    )
    assert text(*settled) == "\nSecond, still go\n"
    clock.now += 0.25
    assert text(view.moving()) == (
        "⠹ ▶ shell  make test                                                       1.2 s\n"
        "    … 1 earlier line\n"
        "    ok 2\n"
        "    ok 3\n"
        "    ok 4\n"
        "⠹ working · 1 tool call · 15 tokens · 3.2 s\n"
    )


def test_acp_permissions_plans_notices_and_unknowns_settle_in_order() -> None:
    view = View(cwd=CWD)
    options = [
        PermissionOption(option_id="once", name="Allow once", kind="allow_once"),
        PermissionOption(option_id="no", name="Reject", kind="reject_once"),
    ]
    blocks = play(
        view,
        Clock(),
        [
            start("c1", "write_file", "edit", f"{CWD}/notes.md"),
            PermissionRequested(agent="acp:demo", request_id="r1", call_id="c1", options=options),
            PermissionResolved(agent="acp:demo", request_id="r1", call_id="c1", option_id="once"),
            PlanUpdated(
                agent="acp:demo",
                entries=[
                    PlanEntry(content="write notes", status="completed"),
                    PlanEntry(content="review", status="in_progress"),
                    PlanEntry(content="ship", status="pending"),
                ],
            ),
            Notice(
                agent="acp:demo",
                severity="warning",
                message="Attempt 1 failed with status 429. Retrying with backoff...",
                source="stderr",
            ),
            Unknown(agent="acp:demo", upstream_type="telemetry", raw='{"type":"telemetry"}'),
            PermissionRequested(agent="acp:demo", request_id="r2", options=options),
            PermissionResolved(agent="acp:demo", request_id="r2"),
        ],
    )
    assert text(*blocks) == (
        f"? permission asked for {CWD}/notes.md: Allow once, Reject\n"
        "    → Allow once\n"
        "! Attempt 1 failed with status 429. Retrying with backoff...\n"
        '? unknown telemetry: {"type":"telemetry"}\n'
        "? permission asked: Allow once, Reject\n"
        "    → cancelled\n"
    )
    assert text(*view.close()) == (
        "⠋ ✎ write_file  notes.md\n"  # never finished: shown as it was
        "Plan\n"
        "  ✓ write notes\n"
        "  ▸ review\n"
        "  ○ ship\n"
    )


def test_reasoning_is_dimmed_and_settles_before_the_answer() -> None:
    view = View()
    blocks = play(
        view,
        Clock(),
        [
            ThoughtDelta(agent="acp:demo", text="**Plan**\n\nread first"),
            MessageDelta(agent="acp:demo", text="Answer."),
        ],
    )
    assert text(*blocks) == "Plan\n\nread first\n"
    assert "\x1b[2;3m" in styled(*blocks)  # dim italic
    assert text(*view.close()) == "\nAnswer.\n"


def test_a_diff_is_coloured_line_by_line() -> None:
    patch = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a - b\n+a + b\n unchanged\n"
    lines = render.diff(patch).renderables
    assert [(line.plain, line.style) for line in lines if isinstance(line, Text)] == [
        ("--- a/x.py", "bold"),
        ("+++ b/x.py", "bold"),
        ("@@ -1 +1 @@", "cyan"),
        ("-a - b", "red"),
        ("+a + b", "green"),
        (" unchanged", "dim"),
    ]


def finished(
    output: str | None = None, diff: str | None = None, error: ToolError | None = None
) -> list[Event]:
    return [
        start("c1", "replace", "edit", "x.py"),
        ToolCallFinished(
            agent="acp:demo",
            call_id="c1",
            status="failed" if error else "completed",
            output=output,
            diff=diff,
            error=error,
        ),
    ]


def test_tool_output_is_previewed_and_shown_whole_when_verbose() -> None:
    output = "\n".join(f"line {n}" for n in range(1, 11))
    short = text(*play(View(), Clock(), finished(output=output)))
    assert short.split("\n")[1:] == [f"    line {n}" for n in range(1, 7)] + [
        "    … 4 more lines",
        "",
    ]
    whole = text(*play(View(verbose=True), Clock(), finished(output=output)))
    assert whole.split("\n")[1:] == [f"    line {n}" for n in range(1, 11)] + [""]


def test_a_command_s_output_is_previewed_from_its_end() -> None:
    output = "\n".join(f"line {n}" for n in range(1, 11))
    events = [start("c1", "run_shell_command", "execute", "make"), *finished(output=output)[1:]]
    assert text(*play(View(), Clock(), events)).split("\n")[1:] == [
        "    … 4 earlier lines",
        *(f"    line {n}" for n in range(5, 11)),
        "",
    ]


def test_a_diff_wins_over_the_output_and_an_error_over_both() -> None:
    patch = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
    shown = text(*play(View(), Clock(), finished(output="Edited x.py", diff=patch)))
    assert shown.split("\n")[1:] == [
        "    --- a/x.py",
        "    +++ b/x.py",
        "    @@ -1 +1 @@",
        "    -a",
        "    +b",
        "",
    ]
    error = ToolError(type="edit_no_change", message="nothing to replace")
    shown = text(*play(View(), Clock(), finished(diff=patch, error=error)))
    assert shown == "✗ ✎ replace  x.py\n    edit_no_change: nothing to replace\n"


def test_files_changed_are_summarised_once_each_in_the_order_of_their_last_change() -> None:
    view = View(cwd=CWD)
    changes = [
        FileChanged(agent="gemini", path=f"{CWD}/a.py", change="modified", derived=True),
        FileChanged(agent="gemini", path="/elsewhere/b.py", change="created", derived=False),
        FileChanged(agent="gemini", path=f"{CWD}/a.py", change="deleted", derived=True),
    ]
    play(view, Clock(), changes)
    assert text(*view.close()) == (
        "\nFiles changed (2)\n    created  /elsewhere/b.py\n    deleted  a.py\n"
    )


def test_a_failed_turn_without_usage_still_reads_well() -> None:
    turn = TurnCompleted(
        agent="gemini",
        ok=False,
        stop_reason="error",
        error=TurnError(kind="auth", message="API key not valid.", exit_code=41),
        answer="",
    )
    assert text(render.outcome(turn, Tally().outcome_figures(turn))) == (
        "✗ failed (error)\n  auth: API key not valid. (exit code 41)\n"
    )


@given(texts("ab`~ \n", max_size=60))
def test_settled_text_and_the_rest_are_the_whole_text(streamed: str) -> None:
    settled, rest = split_settled(streamed)
    assert streamed.endswith(rest)
    assert streamed[: len(streamed) - len(rest)].strip("\n") == settled
    assert split_settled(rest)[0] == ""  # what is left has no finished paragraph
