"""``session/update`` notifications: one type per ``sessionUpdate`` kind."""

from __future__ import annotations

from typing import Literal

import msgspec
from msgspec import UNSET, UnsetType

from gemwire.wire.acp._base import AcpStruct, JsonValue
from gemwire.wire.acp.content import ContentBlock
from gemwire.wire.acp.sessions import Usage
from gemwire.wire.acp.tool_calls import ToolCall, ToolCallUpdate

__all__ = (
    "SESSION_UPDATE_TYPES",
    "AvailableCommand",
    "AvailableCommandsUpdate",
    "CompactionSummaryChunk",
    "CompactionUpdate",
    "ConfigOptionUpdate",
    "ContentChunk",
    "Cost",
    "CurrentModeUpdate",
    "Notice",
    "Plan",
    "PlanEntry",
    "PlanFile",
    "PlanItems",
    "PlanMarkdown",
    "PlanRemoved",
    "PlanUpdate",
    "SessionInfoUpdate",
    "SessionMessage",
    "SessionMessageChunk",
    "SessionNotification",
    "SubagentSessionCapabilities",
    "SubagentState",
    "SubagentUpdate",
    "UsageUpdate",
)


class ContentChunk(AcpStruct, frozen=True, kw_only=True):
    """``user_message_chunk``, ``agent_message_chunk`` and ``agent_thought_chunk``."""

    content: ContentBlock
    message_id: str | None = None


class PlanEntry(AcpStruct, frozen=True, kw_only=True):
    content: str
    priority: Literal["high", "medium", "low"] | str
    status: Literal["pending", "in_progress", "completed"] | str


class Plan(AcpStruct, frozen=True, kw_only=True):
    """``sessionUpdate: "plan"``: the whole plan, replacing the previous one."""

    entries: list[PlanEntry]


class AvailableCommand(AcpStruct, frozen=True, kw_only=True):
    name: str
    description: str = ""
    input: dict[str, JsonValue] | None = None


class AvailableCommandsUpdate(AcpStruct, frozen=True, kw_only=True):
    available_commands: list[AvailableCommand]


class CurrentModeUpdate(AcpStruct, frozen=True, kw_only=True):
    current_mode_id: str


class ConfigOptionUpdate(AcpStruct, frozen=True, kw_only=True):
    config_options: list[dict[str, JsonValue]]
    """Each a ``SessionConfigOption`` (select or boolean), kept as sent."""


class SessionInfoUpdate(AcpStruct, frozen=True, kw_only=True):
    title: str | None = None
    updated_at: str | None = None


class Cost(AcpStruct, frozen=True, kw_only=True):
    amount: float
    currency: str


class UsageUpdate(AcpStruct, frozen=True, kw_only=True):
    """``sessionUpdate: "usage_update"``: context window use, and cost so far."""

    used: int
    size: int
    cost: Cost | None = None


class Notice(AcpStruct, frozen=True, kw_only=True):
    """Unstable: ``sessionUpdate: "notice"``, advice for the user, not session history."""

    severity: Literal["info", "warning", "error"] | str
    title: str
    description: str | None = None


class CompactionUpdate(AcpStruct, frozen=True, kw_only=True):
    """Unstable: ``sessionUpdate: "compaction_update"``, a context compaction by its id.

    A patch: an omitted ``summary`` or ``error`` leaves the stored value, ``null`` clears it."""

    compaction_id: str
    status: Literal["in_progress", "completed", "failed", "cancelled"] | str
    summary: list[ContentBlock] | UnsetType | None = UNSET
    error: str | UnsetType | None = UNSET


class CompactionSummaryChunk(AcpStruct, frozen=True, kw_only=True):
    """Unstable: ``sessionUpdate: "compaction_summary_chunk"``, one block of a summary."""

    compaction_id: str
    content: ContentBlock


class _PlanContent(AcpStruct, frozen=True, kw_only=True, tag_field="type"):
    plan_id: str


class PlanItems(_PlanContent, frozen=True, kw_only=True, tag="items"):
    entries: list[PlanEntry]


class PlanFile(_PlanContent, frozen=True, kw_only=True, tag="file"):
    uri: str


class PlanMarkdown(_PlanContent, frozen=True, kw_only=True, tag="markdown"):
    content: str


class PlanUpdate(AcpStruct, frozen=True, kw_only=True):
    """Unstable: ``sessionUpdate: "plan_update"``, one plan of the session by its id, whole:
    entries, a file, or Markdown (Codex's plan mode sends Markdown)."""

    plan: PlanItems | PlanFile | PlanMarkdown


class PlanRemoved(AcpStruct, frozen=True, kw_only=True):
    """Unstable: ``sessionUpdate: "plan_removed"``, that plan is gone."""

    plan_id: str


class SubagentSessionCapabilities(AcpStruct, frozen=True, kw_only=True):
    cancel: dict[str, JsonValue] | None = None
    """Present: the parent may ``session/cancel`` the child."""


class SubagentState(AcpStruct, frozen=True, kw_only=True):
    """A child's activity: ``running``, ``idle`` (with why it stopped and its usage, where
    reported), ``requires_action``, ``unknown``, or a newer state kept by its name."""

    state: Literal["running", "idle", "requires_action", "unknown"] | str
    stop_reason: str | None = None
    usage: Usage | None = None


class SubagentUpdate(AcpStruct, frozen=True, kw_only=True):
    """Unstable: ``sessionUpdate: "subagent_update"``, the parent session owns a child
    session (a subagent). A patch: an omitted field keeps its value, ``null`` clears it."""

    session_id: str
    title: str | UnsetType | None = UNSET
    description: str | UnsetType | None = UNSET
    capabilities: SubagentSessionCapabilities | UnsetType | None = UNSET
    state: SubagentState | UnsetType | None = UNSET


class SessionMessage(AcpStruct, frozen=True, kw_only=True):
    """Unstable: ``sessionUpdate: "session_message"``, a message between sessions (a parent
    and its subagent), upserted by id; ``content`` omitted keeps the chunks so far."""

    message_id: str
    sender_session_id: str | None = None
    recipient_session_id: str | None = None
    content: list[ContentBlock] | UnsetType | None = UNSET


class SessionMessageChunk(AcpStruct, frozen=True, kw_only=True):
    """Unstable: ``sessionUpdate: "session_message_chunk"``, one block of such a message."""

    message_id: str
    sender_session_id: str | None = None
    recipient_session_id: str | None = None
    content: ContentBlock


SESSION_UPDATE_TYPES: dict[str, type[AcpStruct]] = {
    "user_message_chunk": ContentChunk,
    "agent_message_chunk": ContentChunk,
    "agent_thought_chunk": ContentChunk,
    "tool_call": ToolCall,
    "tool_call_update": ToolCallUpdate,
    "plan": Plan,
    "available_commands_update": AvailableCommandsUpdate,
    "current_mode_update": CurrentModeUpdate,
    "config_option_update": ConfigOptionUpdate,
    "session_info_update": SessionInfoUpdate,
    "usage_update": UsageUpdate,
    # Unstable upstream (schema 1.24.1).
    "plan_update": PlanUpdate,
    "plan_removed": PlanRemoved,
    "notice": Notice,
    "compaction_update": CompactionUpdate,
    "compaction_summary_chunk": CompactionSummaryChunk,
    "subagent_update": SubagentUpdate,
    "session_message": SessionMessage,
    "session_message_chunk": SessionMessageChunk,
}
"""The type of each ``sessionUpdate`` kind of this schema version, and of the unstable kinds
gemwire maps."""


class SessionNotification(AcpStruct, frozen=True, kw_only=True):
    """``session/update`` params; ``update`` is decoded by its ``sessionUpdate`` tag."""

    session_id: str
    update: msgspec.Raw
