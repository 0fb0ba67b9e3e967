"""Antigravity's saved conversations (``gemwire agent antigravity``'s), read-only."""

from __future__ import annotations

from gemwire.sessions.antigravity._store import SavedConversation, saved_conversations

__all__ = ("SavedConversation", "saved_conversations")
