"""Claude Code's saved sessions (inside claude-code-acp 0.16.2): `ClaudeHome`, its source.

- `_conversation` — `CLAUDE` (its `JsonlFormat`), `ClaudeConversation`,
  `load_claude_session`, `read_claude_info`;
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

__all__ = (
    "CLAUDE",
    "ClaudeConversation",
    "ClaudeHome",
    "load_claude_session",
    "project_slug",
    "read_claude_info",
)
