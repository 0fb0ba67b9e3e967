"""The ACP update kinds that have events of their own: the agent's notices, plans by id, subagents,
messages between sessions, and Gemini CLI's mode marker in message text.

Pure functions of one update each (the reducer in `gemwire._normalize.acp` calls them); the
mapping is documented, row by row, in docs/acp.md.

    >>> in_band_mode("acp:gemini-cli", "[MODE_UPDATE] autoEdit")
    'autoEdit'
    >>> in_band_mode("acp:qwen-code", "[MODE_UPDATE] autoEdit") is None
    True
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Literal

from msgspec import UNSET

from gemwire._normalize.notices import notice
from gemwire.events import (
    Event,
    Notice,
    PlanEntry,
    PlanRemoved,
    PlanUpdated,
    SessionMessage,
    SessionUpdated,
    SubagentUpdated,
    TokenUsage,
)
from gemwire.wire import acp

__all__ = (
    "block_text",
    "config_model",
    "in_band_mode",
    "mode_changed",
    "plan_removed",
    "plan_updated",
    "session_message",
    "subagent_updated",
    "token_usage",
    "upstream_notice",
)

_MODE_MARKERS: dict[str, re.Pattern[str]] = {
    # Gemini CLI 0.61.0 (its ACP session's ``handleApprovalModeChanged``) tells a client that
    # the approval mode changed, e.g. to ``autoEdit`` after "Allow for this session", only as
    # one whole agent message chunk; it sends no ``current_mode_update``.
    "acp:gemini-cli": re.compile(r"\[MODE_UPDATE\] (\S+)"),
}
"""Agents that announce a mode change as message text, and the exact chunk they send."""


def in_band_mode(agent: str, text: str) -> str | None:
    """The mode ``agent`` announced, if the chunk ``text`` is its in-band mode marker."""
    marker = _MODE_MARKERS.get(agent)
    match = marker.fullmatch(text) if marker is not None else None
    return match.group(1) if match is not None else None


def mode_changed(agent: str, session_id: str, mode: str) -> SessionUpdated:
    """A mode change read from a marker: the event a ``current_mode_update`` would give,
    marked as read from message text."""
    return SessionUpdated(
        agent=agent,
        session_id=session_id,
        update="current_mode_update",
        data={"currentModeId": mode},
        origin="message_text",
    )


def config_model(options: Sequence[Mapping[str, object]]) -> str | None:
    """The current value of the config option of category ``model``, if any."""
    option = next((o for o in options if o.get("category") == "model"), None)
    value = option.get("currentValue") if option is not None else None
    return value if isinstance(value, str) else None


_SEVERITIES: dict[str, Literal["info", "warning", "error"]] = {
    "info": "info",
    "warning": "warning",
    "error": "error",
}
"""A notice's severity; a custom or future one (``_vendor``) reads as ``info``."""


def upstream_notice(agent: str, session_id: str, update: acp.Notice) -> Notice:
    """The agent's own ``notice`` update."""
    severity = _SEVERITIES.get(update.severity, "info")
    message = update.title if not update.description else f"{update.title}: {update.description}"
    return notice(agent, session_id, message, severity=severity, source="upstream")


def plan_updated(agent: str, session_id: str, update: acp.PlanUpdate) -> PlanUpdated:
    plan = update.plan
    entries = (
        [PlanEntry(content=e.content, status=e.status, priority=e.priority) for e in plan.entries]
        if isinstance(plan, acp.PlanItems)
        else []
    )
    return PlanUpdated(
        agent=agent,
        session_id=session_id,
        entries=entries,
        plan_id=plan.plan_id,
        markdown=plan.content if isinstance(plan, acp.PlanMarkdown) else UNSET,
        uri=plan.uri if isinstance(plan, acp.PlanFile) else UNSET,
    )


def plan_removed(agent: str, session_id: str, update: acp.PlanRemoved) -> PlanRemoved:
    return PlanRemoved(agent=agent, session_id=session_id, plan_id=update.plan_id)


def token_usage(usage: acp.Usage) -> TokenUsage:
    """ACP's ``Usage`` (a prompt's, a subagent's) as the events count tokens."""
    return TokenUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_tokens=usage.cached_read_tokens,
        total_tokens=usage.total_tokens,
    )


def subagent_updated(agent: str, session_id: str, update: acp.SubagentUpdate) -> SubagentUpdated:
    state = update.state
    idle = isinstance(state, acp.SubagentState) and state.state == "idle"
    usage = state.usage if isinstance(state, acp.SubagentState) else None
    return SubagentUpdated(
        agent=agent,
        session_id=session_id,
        child_session_id=update.session_id,
        title=update.title,
        description=update.description,
        state=state.state if isinstance(state, acp.SubagentState) else state,
        stop_reason=state.stop_reason if idle and isinstance(state, acp.SubagentState) else UNSET,
        usage=token_usage(usage) if idle and usage is not None else UNSET,
    )


def block_text(block: acp.ContentBlock) -> str:
    """A content block as text: its text, a link's or resource's URI, else its type."""
    match block:
        case acp.TextContent():
            return block.text
        case acp.ResourceLink():
            return f"@{block.uri}"
        case acp.EmbeddedResource():
            return f"@{block.resource.uri}"
        case _:
            return f"[{block.mime_type}]"


def session_message(
    agent: str, session_id: str, update: acp.SessionMessage | acp.SessionMessageChunk
) -> Event:
    if isinstance(update, acp.SessionMessageChunk):
        text: str | None = block_text(update.content)
        delta = True
    else:
        content = update.content
        text = None if content is UNSET or content is None else "".join(map(block_text, content))
        delta = False
    return SessionMessage(
        agent=agent,
        session_id=session_id,
        message_id=update.message_id,
        sender_session_id=update.sender_session_id,
        recipient_session_id=update.recipient_session_id,
        text=text,
        delta=delta,
    )
