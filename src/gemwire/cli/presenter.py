"""What a person is told about a stream of events: one model for both ways of showing it.

The live view (`gemwire.cli.view.View`, drawn by `gemwire.cli.render`) and the plain
transcript (`gemwire.cli.transcript.Transcript`) lay things out differently (colour and
cards redrawn in place, or one plain line after another) but say the same things: `Tally`
keeps what both summarize as the events go by, and the functions here word every figure,
preview, error and plan line. Neither output words these on its own, so they cannot drift
apart (they had: ``0 cached`` tokens in one and nothing in the other, option ids in one
and names in the other, ``--verbose`` ignored by one). What stays apart is layout only,
and paths: the live view shortens those inside the workspace on screen, the transcript
(a record read elsewhere, later) keeps them whole.

Pure: no I/O, no clock, no rich.
"""

from __future__ import annotations

import os
from typing import Literal

import msgspec

from gemwire.events import (
    Event,
    FileChanged,
    PermissionRequested,
    PlanEntry,
    PlanUpdated,
    SessionStarted,
    TokenUsage,
    ToolCallFinished,
    ToolCallStarted,
    TurnCompleted,
    TurnError,
    Unknown,
    UsageReported,
)

__all__ = (
    "DIFF_LINES",
    "PREVIEW_LINES",
    "Preview",
    "Tally",
    "duration",
    "exit_code_note",
    "figure",
    "offered",
    "plan_mark",
    "preview",
    "prompt_lines",
    "session_parts",
    "show_path",
    "tokens",
    "tool_result",
    "unknown_text",
)

PREVIEW_LINES = 6
"""Output lines shown under a finished tool call (all of them with ``--verbose``)."""
DIFF_LINES = 20
PROMPT_LINES = 4
_PLAN_MARKS = {"completed": "✓", "in_progress": "▸"}


class Tally:
    """What the outputs summarize, kept as the events go by: the session, the tool calls,
    the options offered, the files changed (each once, with its last change), the usage,
    the plan and the outcome."""

    def __init__(self) -> None:
        self.session: SessionStarted | None = None
        self.tool_calls = 0
        self.calls: dict[str, ToolCallStarted] = {}
        self.files: dict[str, FileChanged] = {}
        self.usage: TokenUsage | None = None
        self.plan: PlanUpdated | None = None
        self.turn: TurnCompleted | None = None
        self._options: dict[str, str] = {}

    def apply(self, event: Event) -> None:
        match event:
            case SessionStarted():
                self.session = event
            case ToolCallStarted():
                self.tool_calls += 1
                self.calls[event.call_id] = event
            case FileChanged():
                self.files.pop(event.path, None)  # keep the order of the last changes
                self.files[event.path] = event
            case PermissionRequested():
                self._options.update({o.option_id: o.name for o in event.options})
            case UsageReported():
                self.usage = event.usage
            case PlanUpdated():
                self.plan = event
            case TurnCompleted():
                self.turn = event
                if event.usage is not None:
                    self.usage = event.usage

    def title_of(self, call_id: str | None) -> str | None:
        """The title of a tool call seen so far (for a permission request)."""
        call = self.calls.get(call_id) if call_id else None
        return call.title if call else None

    def kind_of(self, call_id: str) -> str:
        call = self.calls.get(call_id)
        return call.kind if call else "other"

    def option_name(self, option_id: str | None) -> str | None:
        """The name of an option offered so far: what a person picked, not its id."""
        return self._options.get(option_id or "")

    def outcome_figures(self, turn: TurnCompleted, elapsed: float | None = None) -> list[str]:
        """``2 tool calls``, ``1 file changed``, the tokens and the time, where there are any.

        The time is ``elapsed``, how long the run took as gemwire watched it (the agent's
        start-up included), when the events happen now; else, for a capture or a saved
        session, the turn's ``duration_ms``. That is the agent's own figure, and Gemini CLI's
        leaves out its start-up (``0.2 s`` of a 5.5 s run), so it never stands in for a run
        gemwire timed.
        """
        figures = []
        if self.tool_calls:
            figures.append(figure(self.tool_calls, "tool call"))
        if self.files:
            figures.append(figure(len(self.files), "file") + " changed")
        if turn.usage is not None:
            figures.append(tokens(turn.usage))
        seconds = elapsed
        if seconds is None and turn.duration_ms is not None:
            seconds = turn.duration_ms / 1000
        if seconds is not None:
            figures.append(duration(seconds))
        return figures


def figure(count: int, noun: str) -> str:
    """``1 tool call``, ``2 tool calls``."""
    return f"{count} {noun}{'s' if count != 1 else ''}"


def duration(seconds: float) -> str:
    """``0.3 s``, ``12 s``, ``2 m 05 s``."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} m {rest:02d} s"


def tokens(usage: TokenUsage) -> str:
    """``662 tokens (601 in · 61 out)``, and `` · N cached`` when some were: none cached and
    not reported read the same to a person (``--json`` keeps the difference)."""
    cached = f" · {usage.cached_tokens} cached" if usage.cached_tokens else ""
    return (
        f"{usage.total_tokens} tokens ({usage.input_tokens} in · {usage.output_tokens} out{cached})"
    )


def session_parts(event: SessionStarted) -> list[str]:
    """``gemini 0.61.0``, ``model auto``, ``session ID``: those that are known."""
    parts = [event.agent + (f" {event.agent_version}" if event.agent_version else "")]
    if event.model:
        parts.append(f"model {event.model}")
    if event.session_id:
        parts.append(f"session {event.session_id}")
    return parts


def show_path(path: str, cwd: str | None) -> str:
    """``path`` relative to ``cwd`` when it lies inside it."""
    if cwd and os.path.isabs(path):
        relative = os.path.relpath(path, cwd)
        if not relative.startswith(".."):
            return relative
    return path


class Preview(msgspec.Struct, frozen=True, kw_only=True):
    """Some lines of a longer text, and what says how many are left out (``None``: none)."""

    lines: list[str]
    more: str | None = None
    tail: bool = False
    """The last lines were kept: what is left out came before them."""

    def rows(self) -> list[tuple[str, bool]]:
        """The lines in order, the note where lines were left out: ``(text, is_note)``."""
        rows = [(line, False) for line in self.lines]
        if self.more:
            rows.insert(0 if self.tail else len(rows), (self.more, True))
        return rows


def preview(text: str, limit: int | None, *, tail: bool = False) -> Preview:
    """The first ``limit`` lines of ``text`` (the last ones with ``tail``).

    >>> preview("a\\nb\\nc\\n", 2).rows()
    [('a', False), ('b', False), ('… 1 more line', True)]
    >>> preview("a\\nb\\nc", 2, tail=True).rows()
    [('… 1 earlier line', True), ('b', False), ('c', False)]
    """
    lines = text.rstrip("\n").split("\n")
    hidden = 0 if limit is None else max(0, len(lines) - limit)
    if not hidden:
        return Preview(lines=lines)
    shown = lines[hidden:] if tail else lines[: len(lines) - hidden]
    more = figure(hidden, "earlier line" if tail else "more line")
    return Preview(lines=shown, more=f"… {more}", tail=tail)


def prompt_lines(text: str) -> Preview:
    """The first lines of the user's prompt."""
    return preview(text, PROMPT_LINES)


def tool_result(
    finished: ToolCallFinished, *, kind: str, verbose: bool
) -> tuple[Literal["error", "diff", "output"], Preview] | None:
    """What shows under a finished tool call: its error, else its diff, else a preview of
    its output (a command's last lines say how it went, a file's first; all of them with
    ``verbose``); ``None`` for nothing."""
    if finished.error is not None:
        return "error", Preview(lines=[f"{finished.error.type}: {finished.error.message}"])
    if finished.diff:
        return "diff", preview(finished.diff, None if verbose else DIFF_LINES)
    if finished.output and finished.output.strip():
        limit = None if verbose else PREVIEW_LINES
        return "output", preview(finished.output, limit, tail=kind == "execute")
    return None


def offered(event: PermissionRequested) -> str:
    """The options a permission request offers, by name."""
    return ", ".join(option.name for option in event.options)


def plan_mark(entry: PlanEntry) -> str:
    """``✓`` done, ``▸`` in progress, ``○`` still to do."""
    return _PLAN_MARKS.get(entry.status, "○")


_STOPPED_KINDS = ("cancelled", "timeout")
"""Kinds of a turn that was stopped: the agent's exit code then says how it was stopped
(0, -9), not why the turn failed."""


def exit_code_note(error: TurnError) -> str:
    """`` (exit code 52)`` when the agent exited with one that says why the turn failed.

    >>> exit_code_note(TurnError(kind="crashed", message="boom", exit_code=52))
    ' (exit code 52)'
    >>> exit_code_note(TurnError(kind="cancelled", message="interrupted (Ctrl-C)", exit_code=0))
    ''
    """
    if error.exit_code is None or error.kind in _STOPPED_KINDS:
        return ""
    return f" (exit code {error.exit_code})"


def unknown_text(event: Unknown) -> str:
    """An event outside the known protocol: its type and the start of its raw text."""
    return f"? unknown {event.upstream_type or 'message'}: {event.raw[:200]}"
