"""Gemini subagent transcripts and the parent tool call that ran each of them (the links:
`gemwire.sessions.gemini._links`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from gemwire.events import Event, ToolCallStarted
from gemwire.sessions.gemini._conversation import Conversation, load_session
from gemwire.sessions.gemini._links import agent_calls, subagent_paths
from gemwire.wire.gemini_session import MessageRecord

__all__ = ("nested_events", "subagent_files")


def subagent_files(conversation: Conversation) -> dict[str, Path]:
    """The call id -> subagent file of every subagent a session's calls ran (files that exist)."""
    calls = agent_calls(m for m in conversation.messages if isinstance(m, MessageRecord))
    return subagent_paths(conversation.path, conversation.session_id, calls)


def nested_events(conversation: Conversation, *, cwd: str | None = None) -> Iterator[Event]:
    """The session's events, each subagent's right after the call that ran it started.

    A subagent's events carry ``parent_call_id``; a subagent file no call names is left out.
    """
    files = subagent_files(conversation)
    for event in conversation.events(cwd=cwd):
        yield event
        if isinstance(event, ToolCallStarted) and event.call_id in files:
            yield from load_session(files[event.call_id]).events(cwd=cwd)
