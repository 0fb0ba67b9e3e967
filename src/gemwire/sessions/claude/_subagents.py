"""Claude Code's subagents nested in their session's events (`nested_claude_events`)."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

from gemwire.errors import SessionError
from gemwire.events import Event, ToolCallStarted
from gemwire.sessions.claude._conversation import ClaudeConversation, load_claude_session
from gemwire.sessions.claude._links import subagent_calls

__all__ = ("nested_claude_events",)


def nested_claude_events(
    conversation: ClaudeConversation, *, cwd: str | None = None
) -> Iterator[Event]:
    """The session's events, each subagent's right after the ``Task`` call that ran it; a
    subagent's events carry that call's id as ``parent_call_id``."""
    calls = subagent_calls(conversation.path, conversation.records)
    for event in conversation.events(cwd=cwd):
        yield event
        if not isinstance(event, ToolCallStarted):
            continue
        path = calls.get(event.call_id)
        if path is None:
            continue
        try:
            sub = load_claude_session(path)
        except SessionError:
            continue  # gone since listed: the call's own events say what it did
        for inner in sub.subagent_events(cwd=cwd or conversation.cwd):
            yield msgspec.structs.replace(inner, parent_call_id=event.call_id)
