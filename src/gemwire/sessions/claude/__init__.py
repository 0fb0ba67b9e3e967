"""Claude Code's saved sessions (inside claude-code-acp 0.16.2): `ClaudeHome`, its source.

- `_conversation` — `CLAUDE` (its `JsonlFormat`), `ClaudeConversation`,
  `load_claude_session`, `read_claude_info`;
- `_links` — where a session's subagents (``Task``) are kept, and which call ran each;
- `_subagents` — `nested_claude_events`, subagents after the call that ran them;
- `_home` — the home (``CLAUDE_CONFIG_DIR``) and its project slugs.
"""

from __future__ import annotations

from gemwire.sessions.claude._conversation import (
    CLAUDE,
    ClaudeConversation,
    load_claude_session,
    read_claude_info,
)
from gemwire.sessions.claude._home import ClaudeHome, project_slug
from gemwire.sessions.claude._subagents import nested_claude_events

__all__ = (
    "CLAUDE",
    "ClaudeConversation",
    "ClaudeHome",
    "load_claude_session",
    "nested_claude_events",
    "project_slug",
    "read_claude_info",
)
