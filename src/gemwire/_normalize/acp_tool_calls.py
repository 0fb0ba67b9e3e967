"""What the ACP reducer knows of one tool call while it is open, and how its content
reads as output, a unified diff and changed files."""

from __future__ import annotations

import difflib
from typing import Literal

import msgspec

from gemwire.events import TOOL_KINDS, Event, FileChanged, ToolCallFinished, ToolError
from gemwire.wire import acp

__all__ = ("MAX_DIFF_LINES", "OpenCall", "change_of", "finished", "text_of", "unified_diff")

_CANCELLED = ToolError(type="cancelled", message="the turn was cancelled while the call ran")


class OpenCall:
    """A call announced and not yet finished: its latest title, kind, status and content
    (``tool_call_update`` sends only what changed)."""

    __slots__ = (
        "cancelled",
        "content",
        "kind",
        "locations",
        "raw_output",
        "rejected",
        "status",
        "title",
    )

    def __init__(self, update: acp.ToolCall | acp.ToolCallUpdate) -> None:
        self.title = update.title or update.tool_call_id
        self.kind = _tool_kind(update.kind)
        self.status = update.status or "pending"
        self.content: list[acp.ToolCallContent] = update.content or []
        self.locations: list[acp.ToolCallLocation] = update.locations or []
        self.raw_output: object = update.raw_output
        self.rejected: str | None = None
        self.cancelled = False
        """Open when the client cancelled the turn: it ends ``cancelled``, whatever the
        agent reports."""

    def apply(self, update: acp.ToolCallUpdate | acp.ToolCall) -> None:
        if update.title:
            self.title = update.title
        if update.kind:
            self.kind = _tool_kind(update.kind)
        if update.status:
            self.status = update.status
        if update.content is not None:
            self.content = update.content
        if update.locations is not None:
            self.locations = update.locations
        if update.raw_output is not None:
            self.raw_output = update.raw_output


def finished(agent: str, session_id: str, call_id: str, call: OpenCall) -> list[Event]:
    """The events of a call the agent reported ended: `ToolCallFinished` (``cancelled`` if
    the client cancelled the turn while it was open), then, unless it failed, a
    `FileChanged` per diff (a cancelled call's write may have happened all the same)."""
    text = text_of(call.content)
    if text is None and call.raw_output is not None:
        raw = call.raw_output
        text = raw if isinstance(raw, str) else msgspec.json.encode(raw).decode()
    diffs = [item for item in call.content if isinstance(item, acp.Diff)]
    failed = call.status == "failed"
    error = ToolError(type="failed", message=text or "the tool call failed") if failed else None
    events: list[Event] = [
        ToolCallFinished(
            agent=agent,
            session_id=session_id,
            call_id=call_id,
            status="cancelled" if call.cancelled else "failed" if failed else "completed",
            output=text,
            error=_CANCELLED if call.cancelled else error,
            diff=unified_diff(diffs),
        )
    ]
    if not failed:
        events += [
            FileChanged(
                agent=agent,
                session_id=session_id,
                path=diff.path,
                change=change_of(diff),
                call_id=call_id,
                derived=False,
            )
            for diff in diffs
        ]
    return events


def _tool_kind(kind: str | None) -> str:
    return kind if kind in TOOL_KINDS else "other"


def text_of(content: list[acp.ToolCallContent]) -> str | None:
    parts = []
    for item in content:
        match item:
            case acp.Content(content=acp.TextContent(text=text)):
                parts.append(text)
            case acp.Terminal():
                parts.append(f"[terminal {item.terminal_id}]")
    return "\n".join(parts) if parts else None


MAX_DIFF_LINES = 5000
"""Lines (old and new together) above which a diff is not computed: difflib is quadratic
at worst, and a 90,000-line file held the event loop 25 s. The diff then says so."""


def unified_diff(diffs: list[acp.Diff]) -> str | None:
    chunks: list[str] = []
    for diff in diffs:
        old_lines = (diff.old_text or "").splitlines(keepends=True)
        new_lines = diff.new_text.splitlines(keepends=True)
        fromfile = "/dev/null" if diff.old_text is None else diff.path
        if len(old_lines) + len(new_lines) > MAX_DIFF_LINES:
            chunks.append(
                f"--- {fromfile}\n+++ {diff.path}\n"
                f"(not computed: {len(old_lines)} -> {len(new_lines)} lines, "
                f"over the {MAX_DIFF_LINES}-line limit)\n"
            )
            continue
        chunks.extend(
            difflib.unified_diff(old_lines, new_lines, fromfile=fromfile, tofile=diff.path)
        )
    return "".join(chunks) or None


def change_of(diff: acp.Diff) -> Literal["created", "modified", "deleted"]:
    meta_kind = diff.meta.get("kind") if isinstance(diff.meta, dict) else None
    if meta_kind == "add" or (meta_kind is None and diff.old_text is None):
        return "created"
    return "deleted" if meta_kind == "delete" else "modified"
