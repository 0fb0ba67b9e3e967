"""Saved Gemini sessions: discovery and loading into normalized events (local files only)."""
