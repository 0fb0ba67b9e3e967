"""Saved Gemini sessions: find, list, load and export them (local files only, synchronous).

    >>> from gemwire.sessions import GeminiHome
    >>> home = GeminiHome("/nonexistent")   # default: GEMINI_CLI_HOME, else ~
    >>> [info.id for info in home.sessions("/some/project")]   # what `gemini --resume` offers
    []

``GeminiHome.find("latest" | "<n>" | "<uuid>" | path)`` picks a session the way
``gemini --resume`` does; `load_session` reads any session file Gemini CLI has written
(``.jsonl``, or the older single ``.json``) and ``Conversation.events()`` turns it into the
normalized events of `gemwire.events`, the same vocabulary a live run streams.
`to_unified_messages` exports it in the Claude-compatible form, `to_html` and `to_markdown`
as a transcript to read or share, `nested_events` puts each
subagent's events after the call that ran it, and `usage` adds up tokens and estimated cost
across a home. See docs/sessions.md.
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
from gemwire.sessions._html import to_html
from gemwire.sessions._markdown import to_markdown
from gemwire.sessions._records import Problem
from gemwire.sessions._resume_stubs import remove_resume_stubs
from gemwire.sessions._subagents import nested_events, parent_call, subagent_files
from gemwire.sessions._usage import GROUPINGS, UsageReport, UsageRow, usage
from gemwire.sessions.pricing import ModelPrice, PriceTable, load_prices

__all__ = (
    "GROUPINGS",
    "Conversation",
    "GeminiHome",
    "ModelPrice",
    "PriceTable",
    "Problem",
    "Project",
    "RawMessage",
    "SessionInfo",
    "SessionMessage",
    "UsageReport",
    "UsageRow",
    "claude_tool",
    "load_prices",
    "load_session",
    "nested_events",
    "parent_call",
    "project_hash",
    "read_session_info",
    "remove_resume_stubs",
    "short_id_of",
    "subagent_files",
    "to_html",
    "to_markdown",
    "to_unified_messages",
    "usage",
)
