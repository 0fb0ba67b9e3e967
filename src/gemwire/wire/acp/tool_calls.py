"""Tool calls as the agent reports them: ``tool_call`` and ``tool_call_update``."""

from __future__ import annotations

from typing import Literal

from gemwire.wire.acp._base import AcpStruct, JsonValue
from gemwire.wire.acp.content import ContentBlock

__all__ = (
    "Content",
    "Diff",
    "Terminal",
    "ToolCall",
    "ToolCallContent",
    "ToolCallLocation",
    "ToolCallUpdate",
)

ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
ToolCallStatus = Literal["pending", "in_progress", "completed", "failed"]


class _ToolContent(AcpStruct, frozen=True, kw_only=True, tag_field="type"):
    pass


class Content(_ToolContent, frozen=True, kw_only=True, tag="content"):
    content: ContentBlock


class Diff(_ToolContent, frozen=True, kw_only=True, tag="diff"):
    path: str
    old_text: str | None = None
    """``None`` for a new file (Gemini CLI sends ``""`` and ``_meta.kind: "add"``)."""
    new_text: str


class Terminal(_ToolContent, frozen=True, kw_only=True, tag="terminal"):
    terminal_id: str


ToolCallContent = Content | Diff | Terminal


class ToolCallLocation(AcpStruct, frozen=True, kw_only=True):
    path: str
    line: int | None = None


class ToolCall(AcpStruct, frozen=True, kw_only=True):
    """``sessionUpdate: "tool_call"``: a new tool call."""

    tool_call_id: str
    title: str
    name: JsonValue = None
    """Unstable (schema 1.20): the tool's programmatic name, a string or ``null``. Read as sent:
    upstream decodes a bad value as absent, so one must not cost the whole call."""
    kind: ToolKind | str | None = None
    status: ToolCallStatus | str | None = None
    content: list[ToolCallContent] | None = None
    locations: list[ToolCallLocation] | None = None
    raw_input: JsonValue = None
    raw_output: JsonValue = None


class ToolCallUpdate(AcpStruct, frozen=True, kw_only=True):
    """``sessionUpdate: "tool_call_update"``, and the tool call of a permission request:
    only the fields that changed are present."""

    tool_call_id: str
    title: str | None = None
    name: JsonValue = None
    """Unstable: as `ToolCall.name`."""
    kind: ToolKind | str | None = None
    status: ToolCallStatus | str | None = None
    content: list[ToolCallContent] | None = None
    locations: list[ToolCallLocation] | None = None
    raw_input: JsonValue = None
    raw_output: JsonValue = None
