"""Antigravity's saved conversations (``gemwire agent antigravity``'s, google-antigravity
0.1.22), read-only: `AntigravityHome`.

- `_store` — the databases (workspace, models) and which conversations there are;
- `_events` — a transcript's records as events;
- `_conversation` — a transcript loaded or summarized (`AntigravityConversation`);
- `_home` — the home (``$HOME/.gemini/antigravity``).
"""

from __future__ import annotations

from gemwire.sessions.antigravity._conversation import (
    AntigravityConversation,
    load_antigravity_session,
)
from gemwire.sessions.antigravity._home import AntigravityHome
from gemwire.sessions.antigravity._store import SavedConversation, saved_conversations

__all__ = (
    "AntigravityConversation",
    "AntigravityHome",
    "SavedConversation",
    "load_antigravity_session",
    "saved_conversations",
)
