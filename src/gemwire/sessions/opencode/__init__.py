"""OpenCode's saved sessions (OpenCode 1.18.33), read from its SQLite database:
`OpenCodeHome`, its source.

- `_database` — the database read-only: sessions, a session's messages and parts;
- `_conversation` — `OpenCodeConversation`, `load_opencode_session`, `nested_opencode_events`
  (subagents after the ``task`` call that started each);
- `_home` — the home (``XDG_DATA_HOME``, ``OPENCODE_DB``), listing, lookups and usage.
"""

from __future__ import annotations

from gemwire.sessions.opencode._conversation import (
    OpenCodeConversation,
    load_opencode_session,
    nested_opencode_events,
)
from gemwire.sessions.opencode._home import OpenCodeHome, database_path

__all__ = (
    "OpenCodeConversation",
    "OpenCodeHome",
    "database_path",
    "load_opencode_session",
    "nested_opencode_events",
)
