"""``SessionUpdate``: the ``update`` of a ``session/update`` as one tagged union.

Each variant is the type of its kind (``session_updates``, ``tool_calls``) tagged by
``sessionUpdate``, named as upstream's Rust SDK names the enum's variants: the three chunk
kinds share ``ContentChunk`` upstream, so only distinct classes tell them apart. A variant
is its payload type (``isinstance(update.ToolCallUpdate(...), acp.ToolCallUpdate)``), and
encodes with its tag; the payload types themselves stay untagged, as a permission
request's ``toolCall`` and a scenario's updates use them.

An update of a kind this schema does not know is no variant: the protocol layer reads the
tag first (`KINDS`) and keeps such an update raw.

    >>> import msgspec
    >>> decoded = msgspec.json.decode(
    ...     b'{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hm"}}',
    ...     type=SessionUpdate,
    ... )
    >>> decoded, KIND_OF[type(decoded)]
    (AgentThoughtChunk(content=TextContent(text='hm')), 'agent_thought_chunk')
"""

from __future__ import annotations

from gemwire.wire.acp import session_updates as u, tool_calls as t

__all__ = (
    "KINDS",
    "KIND_OF",
    "AgentMessageChunk",
    "AgentThoughtChunk",
    "AvailableCommandsUpdate",
    "CompactionSummaryChunk",
    "CompactionUpdate",
    "ConfigOptionUpdate",
    "CurrentModeUpdate",
    "Notice",
    "Plan",
    "PlanRemoved",
    "PlanUpdate",
    "SessionInfoUpdate",
    "SessionMessage",
    "SessionMessageChunk",
    "SessionUpdate",
    "SubagentUpdate",
    "ToolCall",
    "ToolCallUpdate",
    "UsageUpdate",
    "UserMessageChunk",
)

_TAG = "sessionUpdate"


class UserMessageChunk(
    u.ContentChunk, frozen=True, kw_only=True, tag_field=_TAG, tag="user_message_chunk"
):
    pass


class AgentMessageChunk(
    u.ContentChunk, frozen=True, kw_only=True, tag_field=_TAG, tag="agent_message_chunk"
):
    pass


class AgentThoughtChunk(
    u.ContentChunk, frozen=True, kw_only=True, tag_field=_TAG, tag="agent_thought_chunk"
):
    pass


class ToolCall(t.ToolCall, frozen=True, kw_only=True, tag_field=_TAG, tag="tool_call"):
    pass


class ToolCallUpdate(
    t.ToolCallUpdate, frozen=True, kw_only=True, tag_field=_TAG, tag="tool_call_update"
):
    pass


class Plan(u.Plan, frozen=True, kw_only=True, tag_field=_TAG, tag="plan"):
    pass


class AvailableCommandsUpdate(
    u.AvailableCommandsUpdate,
    frozen=True,
    kw_only=True,
    tag_field=_TAG,
    tag="available_commands_update",
):
    pass


class CurrentModeUpdate(
    u.CurrentModeUpdate, frozen=True, kw_only=True, tag_field=_TAG, tag="current_mode_update"
):
    pass


class ConfigOptionUpdate(
    u.ConfigOptionUpdate, frozen=True, kw_only=True, tag_field=_TAG, tag="config_option_update"
):
    pass


class SessionInfoUpdate(
    u.SessionInfoUpdate, frozen=True, kw_only=True, tag_field=_TAG, tag="session_info_update"
):
    pass


class UsageUpdate(u.UsageUpdate, frozen=True, kw_only=True, tag_field=_TAG, tag="usage_update"):
    pass


class PlanUpdate(u.PlanUpdate, frozen=True, kw_only=True, tag_field=_TAG, tag="plan_update"):
    pass


class PlanRemoved(u.PlanRemoved, frozen=True, kw_only=True, tag_field=_TAG, tag="plan_removed"):
    pass


class Notice(u.Notice, frozen=True, kw_only=True, tag_field=_TAG, tag="notice"):
    pass


class CompactionUpdate(
    u.CompactionUpdate, frozen=True, kw_only=True, tag_field=_TAG, tag="compaction_update"
):
    pass


class CompactionSummaryChunk(
    u.CompactionSummaryChunk,
    frozen=True,
    kw_only=True,
    tag_field=_TAG,
    tag="compaction_summary_chunk",
):
    pass


class SubagentUpdate(
    u.SubagentUpdate, frozen=True, kw_only=True, tag_field=_TAG, tag="subagent_update"
):
    pass


class SessionMessage(
    u.SessionMessage, frozen=True, kw_only=True, tag_field=_TAG, tag="session_message"
):
    pass


class SessionMessageChunk(
    u.SessionMessageChunk,
    frozen=True,
    kw_only=True,
    tag_field=_TAG,
    tag="session_message_chunk",
):
    pass


SessionUpdate = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCall
    | ToolCallUpdate
    | Plan
    | AvailableCommandsUpdate
    | CurrentModeUpdate
    | ConfigOptionUpdate
    | SessionInfoUpdate
    | UsageUpdate
    | PlanUpdate
    | PlanRemoved
    | Notice
    | CompactionUpdate
    | CompactionSummaryChunk
    | SubagentUpdate
    | SessionMessage
    | SessionMessageChunk
)
"""A ``session/update``'s ``update`` of a kind of this schema, decoded by its tag."""

KINDS: dict[str, type[SessionUpdate]] = {
    "user_message_chunk": UserMessageChunk,
    "agent_message_chunk": AgentMessageChunk,
    "agent_thought_chunk": AgentThoughtChunk,
    "tool_call": ToolCall,
    "tool_call_update": ToolCallUpdate,
    "plan": Plan,
    "available_commands_update": AvailableCommandsUpdate,
    "current_mode_update": CurrentModeUpdate,
    "config_option_update": ConfigOptionUpdate,
    "session_info_update": SessionInfoUpdate,
    "usage_update": UsageUpdate,
    "plan_update": PlanUpdate,
    "plan_removed": PlanRemoved,
    "notice": Notice,
    "compaction_update": CompactionUpdate,
    "compaction_summary_chunk": CompactionSummaryChunk,
    "subagent_update": SubagentUpdate,
    "session_message": SessionMessage,
    "session_message_chunk": SessionMessageChunk,
}
"""The variant of each ``sessionUpdate`` kind (the kinds of `SESSION_UPDATE_TYPES`)."""

KIND_OF: dict[type[SessionUpdate], str] = {variant: kind for kind, variant in KINDS.items()}
"""The kind of each variant."""
