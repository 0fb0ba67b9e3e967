"""Codex's saved sessions (codex-acp 0.16.0, Codex 0.137.0; 2.6.0, Codex 0.166): `CodexHome`.

- `_conversation` — `CODEX` (its `JsonlFormat`), `CodexConversation`, `load_codex_session`,
  `read_codex_info`;
- `_home` — the home (``CODEX_HOME``) and its day folders.
"""

from __future__ import annotations

from gemwire.sessions.codex._conversation import (
    CODEX,
    CodexConversation,
    load_codex_session,
    read_codex_info,
)
from gemwire.sessions.codex._home import CodexHome

__all__ = ("CODEX", "CodexConversation", "CodexHome", "load_codex_session", "read_codex_info")
