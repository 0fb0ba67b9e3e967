"""Gemini CLI's saved sessions: the first `SessionSource` (`GeminiHome`).

- `_replay` — a session file replayed to its final state, a block of lines at a time;
- `_links` — how a subagent file and the call that ran it name each other;
- `_conversation` — `Conversation`, `load_session`, `read_session_info`;
- `_subagents` — `subagent_files`, `nested_events`;
- `_projects`, `_home` — the home, its project folders, ``--resume`` lookups;
- `_usage` — the tokens of each response, for `gemwire.sessions.usage`;
- `_resume_stubs` — `remove_resume_stubs`.

Each imports only the ones above it in this list (and the shared `gemwire.sessions` modules).
"""

from __future__ import annotations

from gemwire.sessions.gemini._conversation import Conversation, load_session, read_session_info
from gemwire.sessions.gemini._home import GeminiHome, project_hash
from gemwire.sessions.gemini._links import parent_call
from gemwire.sessions.gemini._projects import Project
from gemwire.sessions.gemini._resume_stubs import remove_resume_stubs
from gemwire.sessions.gemini._subagents import nested_events, subagent_files

__all__ = (
    "Conversation",
    "GeminiHome",
    "Project",
    "load_session",
    "nested_events",
    "parent_call",
    "project_hash",
    "read_session_info",
    "remove_resume_stubs",
    "subagent_files",
)
