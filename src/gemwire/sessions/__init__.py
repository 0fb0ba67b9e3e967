"""Saved Gemini sessions: find, list, load and export them (local files only, synchronous).

    >>> from gemwire.sessions import GeminiHome
    >>> home = GeminiHome("/nonexistent")   # default: GEMINI_CLI_HOME, else ~
    >>> [info.id for info in home.sessions("/some/project")]   # what `gemini --resume` offers
    []

``GeminiHome.find("latest" | "<n>" | "<uuid>" | path)`` picks a session the way
``gemini --resume`` does; `load_session` reads any session file Gemini CLI has written
(``.jsonl``, or the older single ``.json``) and ``Conversation.events()`` turns it into the
normalized events of `gemwire.events`, the same vocabulary a live run streams.
`to_unified_messages` exports it in the Claude-compatible form. See docs/sessions.md.
"""

from __future__ import annotations

from gemwire._normalize.gemini_session import RawMessage, SessionMessage
from gemwire.sessions._export import claude_tool, to_unified_messages
from gemwire.sessions._files import (
    Conversation,
    SessionInfo,
    load_session,
    read_session_info,
    short_id_of,
)
from gemwire.sessions._home import GeminiHome, Project, project_hash
from gemwire.sessions._records import Problem

__all__ = (
    "Conversation",
    "GeminiHome",
    "Problem",
    "Project",
    "RawMessage",
    "SessionInfo",
    "SessionMessage",
    "claude_tool",
    "load_session",
    "project_hash",
    "read_session_info",
    "short_id_of",
    "to_unified_messages",
)
