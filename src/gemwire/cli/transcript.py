"""A plain, line-by-line transcript of events, for people (no colour, no terminal tricks).

It says what the live view says, worded by the same `gemwire.cli.presenter`, one line
after another: answer text flows inline as it streams, everything else is a line of its
own, and the turn ends with the plan (if any) and one line for the outcome.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from gemwire.cli.presenter import (
    Preview,
    Tally,
    exit_code_note,
    offered,
    plan_mark,
    prompt_lines,
    tool_result,
    unknown_text,
)
from gemwire.events import (
    Event,
    FileChanged,
    MessageDelta,
    Notice,
    PermissionRequested,
    PermissionResolved,
    SessionStarted,
    ThoughtDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnCompleted,
    Unknown,
    UserMessage,
)

__all__ = ("Transcript",)

_STATUS = {"completed": "ok", "failed": "FAILED", "cancelled": "cancelled"}
_LINE = 200
"""Characters of a line of tool output (a terminal cuts at its width; a file has none)."""


class Transcript:
    """Writes events as they come; streamed text flows inline until something else happens.

    Args:
        out: where the lines go.
        verbose: every line of tool output, not the first few.
        clock: seconds from a monotonic clock, to time the run as it happens (as the live
            view does); ``None`` for a stream that is not happening now.
    """

    def __init__(
        self, out: TextIO, *, verbose: bool = False, clock: Callable[[], float] | None = None
    ) -> None:
        self._out = out
        self._verbose = verbose
        self._clock = clock
        self._started_at = clock() if clock else None
        self._tally = Tally()
        self._streaming: type[Event] | None = None  # what the line being written streams

    def write(self, event: Event) -> None:
        self._tally.apply(event)
        if isinstance(event, MessageDelta | ThoughtDelta):
            if self._streaming is not type(event):
                self._end_line()
                if isinstance(event, ThoughtDelta):
                    self._out.write("(thinking) ")
                self._streaming = type(event)
            self._out.write(event.text)
            if event.text.endswith("\n"):
                self._streaming = None
            return
        self._end_line()
        for line in self._lines(event):
            self._out.write(line + "\n")

    def _end_line(self) -> None:
        if self._streaming is not None:
            self._out.write("\n")
            self._streaming = None

    def _lines(self, event: Event) -> list[str]:
        match event:
            case SessionStarted():
                model = f" (model {event.model})" if event.model else ""
                return [f"session {event.session_id or '(no id)'}{model}"]
            case UserMessage():
                return _rows(prompt_lines(event.text), "> ", "  ")
            case ToolCallStarted():
                return [f"[{event.kind}] {event.name}: {event.title}"]
            case ToolCallFinished():
                return self._finished(event)
            case FileChanged():
                return [f"  {event.change}: {event.path}"]
            case PermissionRequested():
                title = self._tally.title_of(event.call_id)
                what = f" for {title}" if title else ""
                return [f"  ? permission asked{what}: {offered(event)}"]
            case PermissionResolved():
                chosen = self._tally.option_name(event.option_id) or event.option_id
                alone = " (denied: no client)" if event.outcome == "denied_no_client" else ""
                return [f"  ? permission: {chosen or 'cancelled'}{alone}"]
            case Notice():
                return [f"! {event.severity}: {event.message}"]
            case Unknown():
                return [unknown_text(event)]
            case TurnCompleted():
                return [*self._plan(), self._outcome(event)]
        return []

    def _finished(self, event: ToolCallFinished) -> list[str]:
        kind = self._tally.kind_of(event.call_id)
        result = tool_result(event, kind=kind, verbose=self._verbose)
        head = f"  -> {_STATUS[event.status]}"
        if result is None:
            return [head]
        what, lines = result
        if what == "error":
            return [f"{head}: {lines.lines[0]}"]
        return [head, *(f"  | {text[:_LINE]}" for text, _ in lines.rows())]

    def _plan(self) -> list[str]:
        plan = self._tally.plan
        if plan is None:
            return []
        return ["plan:", *(f"  {plan_mark(entry)} {entry.content}" for entry in plan.entries)]

    def _outcome(self, turn: TurnCompleted) -> str:
        parts = [f"ok ({turn.stop_reason})" if turn.ok else f"FAILED ({turn.stop_reason})"]
        if turn.error:
            parts.append(f"{turn.error.kind}: {turn.error.message}{exit_code_note(turn.error)}")
        elapsed = None
        if self._clock is not None and self._started_at is not None:
            elapsed = self._clock() - self._started_at
        parts += self._tally.outcome_figures(turn, elapsed)
        return "-- " + " · ".join(parts)


def _rows(lines: Preview, prefix: str, note_prefix: str) -> list[str]:
    return [f"{note_prefix if note else prefix}{text}" for text, note in lines.rows()]
