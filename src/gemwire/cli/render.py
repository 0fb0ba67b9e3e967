"""How the normalized events look on a terminal: pure functions from data to rich renderables.

No I/O and no clock: times come in as arguments, so every function here renders the same
way every time and is snapshot-tested with a capture console (tests/unit/cli/test_render.py).
`gemwire.cli.view.View` decides *when* to show what; the live driver decides *where*.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from rich.console import Group, RenderableType
from rich.markdown import Markdown
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

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
    "duration",
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
    "show_path",
    "thought",
    "tokens",
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
_PREVIEW_LINES = 6
"""Output lines shown under a finished tool call (all of them with ``--verbose``)."""
_DIFF_LINES = 20
_PROMPT_LINES = 4
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


def duration(seconds: float) -> str:
    """``0.3 s``, ``12 s``, ``2 m 05 s``."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} m {rest:02d} s"


def tokens(usage: TokenUsage) -> str:
    """``662 tokens (601 in · 61 out)``, and `` · N cached`` when some were."""
    cached = f" · {usage.cached_tokens} cached" if usage.cached_tokens else ""
    return (
        f"{usage.total_tokens} tokens ({usage.input_tokens} in · {usage.output_tokens} out{cached})"
    )


def show_path(path: str, cwd: str | None) -> str:
    """``path`` relative to ``cwd`` when it lies inside it."""
    if cwd and os.path.isabs(path):
        relative = os.path.relpath(path, cwd)
        if not relative.startswith(".."):
            return relative
    return path


def _lines(text: str, limit: int | None, style: str, *, tail: bool = False) -> list[RenderableType]:
    """The first ``limit`` lines of ``text`` (the last ones with ``tail``), one row each."""
    lines = text.rstrip("\n").split("\n")
    hidden = 0 if limit is None else max(0, len(lines) - limit)
    shown = lines[hidden:] if tail else lines[: len(lines) - hidden]
    out: list[RenderableType] = [
        Text(line.expandtabs(4), style=style, no_wrap=True, overflow="ellipsis") for line in shown
    ]
    if hidden:
        what = f"{'earlier' if tail else 'more'} line{'s' if hidden != 1 else ''}"
        more = Text(f"… {hidden} {what}", style="dim italic")
        out.insert(0 if tail else len(out), more)
    return out


def diff(text: str, limit: int | None = _DIFF_LINES) -> Group:
    """A unified diff, coloured line by line."""
    lines = text.rstrip("\n").split("\n")
    shown = lines if limit is None else lines[:limit]
    out: list[RenderableType] = []
    for line in shown:
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        else:
            style = "dim"
        out.append(Text(line.expandtabs(4), style=style, no_wrap=True, overflow="ellipsis"))
    if len(lines) > len(shown):
        out.append(Text(f"… {len(lines) - len(shown)} more lines", style="dim italic"))
    return Group(*out)


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
    limit = None if verbose else _PREVIEW_LINES
    finished = card.finished
    if finished is None:
        if card.progress:
            body += _lines(card.progress, 3, "dim", tail=True)
    elif finished.error is not None:
        body.append(
            Text(f"{finished.error.type}: {finished.error.message}", style="red", overflow="fold")
        )
    elif finished.diff:
        body.append(diff(finished.diff, None if verbose else _DIFF_LINES))
    elif finished.output and finished.output.strip():
        # A command's last lines say how it went (the failure, the summary); a file's first.
        body += _lines(finished.output, limit, "dim", tail=kind == "execute")
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
    parts = [event.agent + (f" {event.agent_version}" if event.agent_version else "")]
    if event.model:
        parts.append(f"model {event.model}")
    if event.session_id:
        parts.append(f"session {event.session_id}")
    return Text(" · ".join(parts), style="dim")


def prompt(text: str) -> RenderableType:
    """The user's prompt, its first lines."""
    lines = text.rstrip("\n").split("\n")
    shown = "\n".join(lines[:_PROMPT_LINES])
    more = f"\n  … {len(lines) - _PROMPT_LINES} more lines" if len(lines) > _PROMPT_LINES else ""
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
    what = event.upstream_type or "message"
    return Text(f"? unknown {what}: {event.raw[:200]}", style="dim", overflow="ellipsis")


def plan(event: PlanUpdated) -> RenderableType:
    marks = {"completed": ("✓", "green"), "in_progress": ("▸", "yellow")}
    lines: list[RenderableType] = [Text("Plan", style="bold")]
    for entry in event.entries:
        mark, style = marks.get(entry.status, ("○", "dim"))
        done = "strike dim" if entry.status == "completed" else ""
        lines.append(Text.assemble("  ", (mark, style), " ", (entry.content, done)))
    return Group(*lines)


def permission_asked(event: PermissionRequested, title: str | None = None) -> RenderableType:
    what = f" for {title}" if title else ""
    offered = ", ".join(option.name for option in event.options)
    return Text.assemble(("? ", "bold magenta"), f"permission asked{what}: ", (offered, "dim"))


def permission_resolved(event: PermissionResolved, name: str | None = None) -> RenderableType:
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
        parts.append(f"{tool_calls} tool call{'s' if tool_calls != 1 else ''}")
    if usage is not None:
        parts.append(f"{usage.total_tokens} tokens")
    if elapsed is not None:
        parts.append(duration(elapsed))
    return Text.assemble((SPINNER[frame % len(SPINNER)], "yellow"), " ", (" · ".join(parts), "dim"))


def outcome(
    turn: TurnCompleted,
    *,
    tool_calls: int,
    files: int,
    elapsed: float | None = None,
) -> RenderableType:
    """How the turn ended: ``✓ done`` or ``✗ failed`` with the error, then the figures."""
    figures = []
    if tool_calls:
        figures.append(f"{tool_calls} tool call{'s' if tool_calls != 1 else ''}")
    if files:
        figures.append(f"{files} file{'s' if files != 1 else ''} changed")
    if turn.usage is not None:
        figures.append(tokens(turn.usage))
    seconds = turn.duration_ms / 1000 if turn.duration_ms is not None else elapsed
    if seconds is not None:
        figures.append(duration(seconds))
    head = Text.assemble(
        ("✓ done", "bold green") if turn.ok else ("✗ failed", "bold red"),
        (f" ({turn.stop_reason})", "dim") if turn.stop_reason != "end_turn" else "",
        (" · " + " · ".join(figures), "dim") if figures else "",
    )
    if turn.error is None:
        return head
    code = f" (exit code {turn.error.exit_code})" if turn.error.exit_code is not None else ""
    reason = Text.assemble((turn.error.kind, "bold red"), f": {turn.error.message}", (code, "dim"))
    return Group(head, Padding(reason, (0, 0, 0, 2)))


def resume(command: str) -> RenderableType:
    """The line that continues the session, e.g. ``gemini --resume <id>``."""
    return Text.assemble(("↻ resume: ", "dim"), (command, "bold cyan"))
