"""The model responses saved in a Gemini home, for `gemwire.sessions.usage`.

Each file is replayed like `load_session` replays it (upserts, rewinds, resumes), but its
messages are decoded only as far as their id, type, timestamp, model and tokens; the rest of
each line is skipped, not built. A message recorded in more than one file (a resume's
files, a project folder Gemini copied to its new layout) counts once. Subagent transcripts
count towards the session that started them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from gemwire.errors import SessionError
from gemwire.sessions._reading import folder_entries, is_dir, session_paths
from gemwire.sessions._source import SessionUsage, Tokens, UsageTally
from gemwire.sessions.gemini._projects import Project
from gemwire.sessions.gemini._replay import SESSION_SUFFIXES, replay
from gemwire.wire.gemini_session import SESSION_FILE_PREFIX, TokensSummary

__all__ = ("session_usage",)


class _UsageMessage(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What usage needs of a message record; everything else on the line is skipped."""

    id: str
    type: Any = None
    timestamp: Any = None
    tokens: TokensSummary | UnsetType | None = UNSET
    model: Any = None


def _files(
    projects: list[Project], unread: dict[str, str]
) -> Iterator[tuple[Project, Path, str | None]]:
    """Every session file: (project, path, parent session id for subagents)."""
    for project in projects:
        for entry in folder_entries(project.chats_dir, unread):
            if is_dir(entry):
                for path in session_paths(Path(entry.path), SESSION_SUFFIXES):
                    yield project, path, entry.name
            elif entry.name.startswith(SESSION_FILE_PREFIX) and entry.name.endswith(
                SESSION_SUFFIXES
            ):
                yield project, Path(entry.path), None


def _responses(
    messages: Any, own: str, seen: set[tuple[str, str]]
) -> Iterator[tuple[Any, Any, Tokens, int, int]]:
    for message in messages:
        tokens = getattr(message, "tokens", None)
        if not tokens or message.type != "gemini" or (own, message.id) in seen:
            continue
        seen.add((own, message.id))
        yield message.timestamp, message.model, tokens, tokens.thoughts or 0, tokens.tool or 0


def session_usage(
    projects: list[Project], tally: UsageTally, unread: dict[str, str]
) -> Iterator[SessionUsage]:
    """Every model response saved in the session files of ``projects`` (a folder that
    cannot be listed is noted in ``unread``)."""
    seen: set[tuple[str, str]] = set()
    for folder, path, parent in _files(projects, unread):
        tally.files += 1
        try:
            replayed, _ = replay(path, summary=False, message_type=_UsageMessage)
        except SessionError:
            tally.problems += 1
            continue
        tally.problems += len(replayed.problems)
        meta = replayed.metadata
        own = meta.get("sessionId")
        own = own if isinstance(own, str) else str(path)
        yield SessionUsage(
            folder.root or folder.id,
            parent or own,
            meta.get("startTime"),
            _responses(replayed.messages, own, seen),
        )
