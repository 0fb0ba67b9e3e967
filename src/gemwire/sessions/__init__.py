"""Saved agent sessions: find, list, load and export them (local files only, synchronous).

    >>> from gemwire.sessions import GeminiHome
    >>> home = GeminiHome("/nonexistent")   # default: GEMINI_CLI_HOME, else ~
    >>> [info.id for info in home.sessions("/some/project")]   # what `gemini --resume` offers
    []

``GeminiHome.find("latest" | "<n>" | "<uuid>" | path)`` picks a session the way
``gemini --resume`` does; `load_session` reads any session file Gemini CLI has written
(``.jsonl``, or the older single ``.json``) and ``Conversation.events()`` turns it into the
normalized events of `gemwire.events`, the same vocabulary a live run streams.
`to_unified_messages` exports it in the Claude-compatible form, `to_html` and `to_markdown`
as a transcript to read or share, `nested_events` puts each subagent's events after the call
that ran it, `search` finds the sessions holding a text, and `usage` adds up tokens and
estimated cost across a home. Each agent's sessions are a `SessionSource` (`source("gemini")` is a
`GeminiHome`; ``source("claude")`` a `ClaudeHome`, and so on for Codex, Qwen Code,
OpenCode and Antigravity). See docs/sessions.md.
"""

from __future__ import annotations

from gemwire.protocol.gemini_messages import RawMessage, SessionMessage
from gemwire.protocol.gemini_session import Problem
from gemwire.sessions._export import claude_tool, to_unified_messages
from gemwire.sessions._formats import EXPORT_FORMATS, ExportFormat, export_lines, whose
from gemwire.sessions._html import to_html
from gemwire.sessions._jsonl import JsonlConversation
from gemwire.sessions._markdown import to_markdown
from gemwire.sessions._redact import Redactor
from gemwire.sessions._registry import (
    AGENT_NAMES,
    AGENTS,
    load_session,
    nested_events,
    source,
    sources,
)
from gemwire.sessions._search import SearchHit, SearchMatch, search
from gemwire.sessions._source import Agent, LoadedSession, SessionSource
from gemwire.sessions._summary import SessionInfo, json_safe, short_id_of
from gemwire.sessions._usage import (
    GROUPINGS,
    PriceSource,
    UsageReport,
    UsageRow,
    crossed,
    parse_when,
    usage,
)
from gemwire.sessions.antigravity import AntigravityConversation, AntigravityHome
from gemwire.sessions.claude import ClaudeConversation, ClaudeHome, nested_claude_events
from gemwire.sessions.codex import CodexConversation, CodexHome
from gemwire.sessions.gemini import (
    Conversation,
    GeminiHome,
    Project,
    parent_call,
    project_hash,
    read_session_info,
    remove_resume_stubs,
    subagent_files,
)
from gemwire.sessions.opencode import (
    OpenCodeConversation,
    OpenCodeHome,
    nested_opencode_events,
)
from gemwire.sessions.pricing import ModelPrice, PriceTable, load_prices
from gemwire.sessions.qwen import QwenConversation, QwenHome

__all__ = (
    "AGENTS",
    "AGENT_NAMES",
    "EXPORT_FORMATS",
    "GROUPINGS",
    "Agent",
    "AntigravityConversation",
    "AntigravityHome",
    "ClaudeConversation",
    "ClaudeHome",
    "CodexConversation",
    "CodexHome",
    "Conversation",
    "ExportFormat",
    "GeminiHome",
    "JsonlConversation",
    "LoadedSession",
    "ModelPrice",
    "OpenCodeConversation",
    "OpenCodeHome",
    "PriceSource",
    "PriceTable",
    "Problem",
    "Project",
    "QwenConversation",
    "QwenHome",
    "RawMessage",
    "Redactor",
    "SearchHit",
    "SearchMatch",
    "SessionInfo",
    "SessionMessage",
    "SessionSource",
    "UsageReport",
    "UsageRow",
    "claude_tool",
    "crossed",
    "export_lines",
    "json_safe",
    "load_prices",
    "load_session",
    "nested_claude_events",
    "nested_events",
    "nested_opencode_events",
    "parent_call",
    "parse_when",
    "project_hash",
    "read_session_info",
    "remove_resume_stubs",
    "search",
    "short_id_of",
    "source",
    "sources",
    "subagent_files",
    "to_html",
    "to_markdown",
    "to_unified_messages",
    "usage",
    "whose",
)
