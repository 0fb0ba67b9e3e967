"""How the normalized events look on a terminal: pure functions from data to rich renderables.

No I/O and no clock: times come in as arguments, so every function here renders the same
way every time and is snapshot-tested with a capture console (tests/unit/cli/test_render.py).
`gemwire.cli.view.View` decides *when* to show what; the live driver decides *where*.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Group, RenderableType
from rich.markdown import Markdown
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from gemwire.cli.presenter import (
    DIFF_LINES,
    Preview,
    duration,
    exit_code_note,
    figure,
    offered,
    plan_mark,
    preview,
    prompt_lines,
    session_parts,
    show_path,
    tool_result,
    unknown_text,
)
from gemwire.events import (
    FileChanged,
    Notice,
    PermissionRequested,
    PermissionResolved,
    PlanUpdated,
    SessionStarted,
    TokenUsage,
    ToolCallFinished,
    ToolCallStarted,
    TurnCompleted,
    Unknown,
)

__all__ = (
    "KIND_ICONS",
    "ToolCard",
    "answer",
    "diff",
    "diff_style",
    "file_change",
    "files_summary",
    "footer",
    "notice",
    "outcome",
    "permission_asked",
    "permission_resolved",
    "plan",
    "prompt",
    "resume",
    "session",
    "thought",
    "tool_card",
    "unknown",
)

KIND_ICONS = {
    "read": "≡",
    "edit": "✎",
    "delete": "⌫",
    "move": "⇄",
    "search": "⌕",
    "execute": "▶",
    "think": "∴",
    "fetch": "⇣",
    "switch_mode": "⇆",
    "other": "◆",
}
"""One single-cell glyph per ACP tool kind (emoji are two cells wide in some terminals only)."""

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

_STATUS = {
    "completed": ("✓", "green"),
    "failed": ("✗", "red"),
    "cancelled": ("⊘", "yellow"),
}
_PLAN_STYLES = {"completed": "green", "in_progress": "yellow"}
_CHANGE_STYLES = {"created": "green", "written": "green", "modified": "yellow", "deleted": "red"}


@dataclass
class ToolCard:
    """A tool call as the view knows it: how it started, how it is going, how it ended."""

    started: ToolCallStarted | None
    call_id: str
    started_at: float | None = None
    finished: ToolCallFinished | None = None
    finished_at: float | None = None
    progress: str | None = None
    """The latest content of a `ToolCallUpdated` (ACP agents report progress)."""
    files: list[FileChanged] = field(default_factory=list)

    def elapsed(self, now: float | None) -> float | None:
        if self.started_at is None:
            return None
        end = self.finished_at if self.finished_at is not None else now
        return None if end is None else max(0.0, end - self.started_at)


def _rows(lines: Preview, style: str) -> list[RenderableType]:
    """One row a line, the note on what was left out in dim italics."""
    return [_note(text) if note else _row(text, style) for text, note in lines.rows()]


def _row(line: str, style: str) -> Text:
    return Text(line.expandtabs(4), style=style, no_wrap=True, overflow="ellipsis")


def _note(text: str) -> Text:
    return Text(text, style="dim italic")


def diff(text: str, limit: int | None = DIFF_LINES) -> Group:
    """A unified diff, coloured line by line (its first ``limit`` lines)."""
    return _diff(preview(text, limit))


def _diff(lines: Preview) -> Group:
    return Group(
        *[_note(text) if note else _row(text, diff_style(text)) for text, note in lines.rows()]
    )


def diff_style(line: str) -> str:
    """The style of a unified diff's ``line`` (the permission prompt's diff too)."""
    if line.startswith(("+++", "---")):
        return "bold"
    if line.startswith("+"):
        return "green"
    if line.startswith("-"):
        return "red"
    if line.startswith("@@"):
        return "cyan"
    return "dim"


def tool_card(
    card: ToolCard,
    *,
    now: float | None = None,
    frame: int = 0,
    verbose: bool = False,
    cwd: str | None = None,
) -> RenderableType:
    """One tool call: status, kind icon, tool name, title and duration; then what it produced.

    A running call shows a spinner (``frame`` picks its glyph) and its latest progress; a
    finished one its error, its diff, or a preview of its output: the last lines of a
    command, the first lines of anything else (all of it with ``verbose``).
    """
    started = card.started
    kind = started.kind if started else "other"
    if card.finished is None:
        mark, mark_style = SPINNER[frame % len(SPINNER)], "yellow"
    else:
        mark, mark_style = _STATUS.get(card.finished.status, ("?", "yellow"))
    title = started.title if started else card.call_id
    if started and cwd and started.locations and title == started.locations[0].path:
        title = show_path(title, cwd)
    head = Table.grid(padding=(0, 1), expand=True)
    head.add_column(no_wrap=True)
    head.add_column(no_wrap=True)
    head.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
    head.add_column(justify="right", no_wrap=True)
    elapsed = card.elapsed(now)
    head.add_row(
        Text(mark, style=mark_style),
        Text(KIND_ICONS.get(kind, KIND_ICONS["other"]), style="cyan"),
        Text.assemble((started.name if started else "tool", "bold"), "  ", (title, "")),
        Text(duration(elapsed), style="dim") if elapsed is not None else Text(""),
    )
    body: list[RenderableType] = []
    if card.finished is None:
        if card.progress:
            body += _rows(preview(card.progress, 3, tail=True), "dim")
    elif result := tool_result(card.finished, kind=kind, verbose=verbose):
        what, lines = result
        if what == "error":
            body.append(Text(lines.lines[0], style="red", overflow="fold"))
        elif what == "diff":
            body.append(_diff(lines))
        else:
            body += _rows(lines, "dim")
    if not body:
        return head
    return Group(head, Padding(Group(*body), (0, 0, 0, 4)))


def file_change(event: FileChanged, cwd: str | None = None) -> RenderableType:
    """``    modified  calc.py`` under the tool card that changed it."""
    style = _CHANGE_STYLES.get(event.change, "")
    return Text.assemble("    ", (f"{event.change:<8}", style), " ", show_path(event.path, cwd))


def files_summary(files: list[FileChanged], cwd: str | None = None) -> RenderableType:
    """Every file the turn changed, once each with its last change."""
    lines: list[RenderableType] = [Text(f"Files changed ({len(files)})", style="bold")]
    lines += [file_change(event, cwd) for event in files]
    return Group(*lines)


def session(event: SessionStarted) -> RenderableType:
    return Text(" · ".join(session_parts(event)), style="dim")


def prompt(text: str) -> RenderableType:
    """The user's prompt, its first lines."""
    lines = prompt_lines(text)
    shown = "\n".join(lines.lines)
    more = f"\n  {lines.more}" if lines.more else ""
    return Text.assemble(("> ", "bold cyan"), (shown, "bold"), (more, "dim italic"))


def answer(text: str) -> RenderableType:
    """Assistant text, as Markdown."""
    return Markdown(text)


def thought(text: str) -> RenderableType:
    """Reasoning text, dimmed."""
    return Markdown(text, style="dim italic")


def notice(event: Notice) -> RenderableType:
    mark, style = {"info": ("i", "dim"), "warning": ("!", "yellow"), "error": ("✗", "red")}[
        event.severity
    ]
    return Text.assemble((f"{mark} ", f"bold {style}"), (event.message, style))


def unknown(event: Unknown) -> RenderableType:
    return Text(unknown_text(event), style="dim", overflow="ellipsis")


def plan(event: PlanUpdated) -> RenderableType:
    lines: list[RenderableType] = [Text("Plan", style="bold")]
    for entry in event.entries:
        mark, style = plan_mark(entry), _PLAN_STYLES.get(entry.status, "dim")
        done = "strike dim" if entry.status == "completed" else ""
        lines.append(Text.assemble("  ", (mark, style), " ", (entry.content, done)))
    # An ACP plan by id may come as Markdown (Codex's plan mode) or a file, not entries.
    whole = event.markdown or event.uri
    if isinstance(whole, str):
        lines += [Text(f"  {line}") for line in whole.splitlines()]
    return Group(*lines)


def permission_asked(event: PermissionRequested, title: str | None = None) -> RenderableType:
    what = f" for {title}" if title else ""
    return Text.assemble(
        ("? ", "bold magenta"), f"permission asked{what}: ", (offered(event), "dim")
    )


def permission_resolved(event: PermissionResolved, name: str | None = None) -> RenderableType:
    if event.outcome == "denied_no_client":
        return Text(f"    → {name or event.option_id or 'cancelled'} (denied: no client)", "yellow")
    if event.option_id is None:
        return Text("    → cancelled", style="yellow")
    return Text(f"    → {name or event.option_id}", style="magenta")


def footer(
    *,
    elapsed: float | None,
    usage: TokenUsage | None,
    tool_calls: int,
    frame: int = 0,
    started: bool = True,
) -> RenderableType:
    """The line under the moving part: what is happening, the usage so far, the time."""
    parts = ["working" if started else "starting"]
    if tool_calls:
        parts.append(figure(tool_calls, "tool call"))
    if usage is not None:
        parts.append(f"{usage.total_tokens} tokens")
    if elapsed is not None:
        parts.append(duration(elapsed))
    return Text.assemble((SPINNER[frame % len(SPINNER)], "yellow"), " ", (" · ".join(parts), "dim"))


def outcome(turn: TurnCompleted, figures: list[str]) -> RenderableType:
    """How the turn ended: ``✓ done`` or ``✗ failed`` with the error, then the figures
    (`Tally.outcome_figures`)."""
    head = Text.assemble(
        ("✓ done", "bold green") if turn.ok else ("✗ failed", "bold red"),
        (f" ({turn.stop_reason})", "dim") if turn.stop_reason != "end_turn" else "",
        (" · " + " · ".join(figures), "dim") if figures else "",
    )
    if turn.error is None:
        return head
    reason = Text.assemble(
        (turn.error.kind, "bold red"),
        f": {turn.error.message}",
        (exit_code_note(turn.error), "dim"),
    )
    return Group(head, Padding(reason, (0, 0, 0, 2)))


def resume(command: str) -> RenderableType:
    """The line that continues the session, e.g. ``gemini --resume <id>``."""
    return Text.assemble(("↻ resume: ", "dim"), (command, "bold cyan"))
