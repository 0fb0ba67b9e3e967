"""Claude Code's saved sessions (inside claude-code-acp 0.16.2): `ClaudeHome`, its source.

- `_conversation` — `ClaudeConversation`, `load_claude_session`, `read_claude_info`;
- `_home` — the home, its project folders, lookups and usage.
"""

from __future__ import annotations

from gemwire.sessions.claude._conversation import (
    ClaudeConversation,
    load_claude_session,
    read_claude_info,
)
from gemwire.sessions.claude._home import ClaudeHome, project_slug

__all__ = (
    "ClaudeConversation",
    "ClaudeHome",
    "load_claude_session",
    "project_slug",
    "read_claude_info",
)
