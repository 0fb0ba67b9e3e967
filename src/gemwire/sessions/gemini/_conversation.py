"""One Gemini session file: loaded whole (`load_session`) or summarized (`read_session_info`).

Both replay the file (`gemwire.sessions.gemini._replay`): any format Gemini CLI has written,
in either project-folder layout, a block of lines at a time. A line the CLI is still writing,
a corrupt line or an empty file becomes a `Problem` (and a ``notice`` event), never an
exception; only a file that cannot be read at all raises `SessionError`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import msgspec

from gemwire._normalize.gemini_session import SessionNormalizer
from gemwire._normalize.notices import notice
from gemwire.events import Event
from gemwire.protocol.gemini_messages import SessionMessage
from gemwire.protocol.gemini_session import MessageSummary, Problem, RecordReplay
from gemwire.sessions._summary import Format, Kind, SessionInfo
from gemwire.sessions.gemini._links import parent_call
from gemwire.sessions.gemini._replay import replay

__all__ = ("Conversation", "load_session", "read_session_info")


class Conversation(msgspec.Struct, frozen=True, kw_only=True):
    """A session file's final state: metadata, messages in order, and what was skipped."""

    path: str
    format: Format
    session_id: str | None
    project_hash: str | None
    start_time: str | None
    last_updated: str | None
    summary: str | None
    kind: Kind
    directories: list[str]
    messages: Sequence[SessionMessage]
    """In order; each decoded from its recorded line whenever it is read (see `Messages`),
    unless loaded with ``keep_originals=True``."""
    problems: list[Problem]
    resumable: bool
    originals: list[Any] = []
    """Each message exactly as recorded, unknown fields included (``keep_originals=True``)."""
    parent_id: str | None = None
    """A subagent's parent session, and the ``call_id`` of the parent's call that ran it
    (every event of a subagent carries it as ``parent_call_id``)."""
    parent_call_id: str | None = None

    @property
    def agent(self) -> str:
        """``gemini``: whose session this is (as every loaded session says)."""
        return "gemini"

    def events(self, *, cwd: str | None = None, agent: str = "gemini") -> Iterator[Event]:
        """The normalized events: the same vocabulary a live run streams (see docs/sessions.md).

        ``cwd`` (the project root) resolves the relative paths the model used. Each message
        is decoded, mapped and let go in turn: iterating holds one message at a time.
        """
        events = self._events(cwd=cwd, agent=agent)
        parent = self.parent_call_id
        if parent is None:
            return events  # not wrapped: a generator less for every event to pass through
        return (msgspec.structs.replace(event, parent_call_id=parent) for event in events)

    def _events(self, *, cwd: str | None, agent: str) -> Iterator[Event]:
        sid = self.session_id
        normalizer = SessionNormalizer(session_id=sid, cwd=cwd, agent=agent)
        yield from normalizer.start()  # session_started, then the problems, in line order
        # Event text is Unicode: a file name that is not UTF-8 shows U+FFFD for its bad bytes.
        path = self.path.encode(errors="surrogateescape").decode(errors="replace")
        for problem in self.problems:
            where = f"line {problem.line}: " if problem.line else ""
            yield notice(
                agent,
                sid,
                f"{path}: {where}{problem.message}",
                severity="warning" if sid else "error",
            )
        feed = normalizer.feed
        for message in self.messages:
            yield from feed(message)
        yield from normalizer.finish()


def _str(metadata: dict[str, Any], key: str) -> str | None:
    value = metadata.get(key)
    return value if isinstance(value, str) else None


def _kind(metadata: dict[str, Any]) -> Kind:
    return "subagent" if metadata.get("kind") == "subagent" else "main"


def load_session(path: str | os.PathLike[str], *, keep_originals: bool = False) -> Conversation:
    """Load a session file of any format Gemini CLI writes, read a block of lines at a time.

    ``keep_originals`` also keeps every message exactly as recorded (for exports), and every
    message decoded; without it, a message is kept as its recorded line (a third of the
    memory) and decoded whenever ``messages`` or `Conversation.events` reads it.

    Raises `SessionNotFound` if there is no such file, `SessionError` if it cannot be read;
    anything wrong inside the file is reported in ``problems``.
    """
    file = Path(path)
    replayed, fmt = replay(file, summary=False, keep_raw=keep_originals, lines=not keep_originals)
    meta = replayed.metadata
    directories = meta.get("directories")
    parent = None
    if _kind(meta) == "subagent" and isinstance(meta.get("sessionId"), str):
        parent = parent_call(file, meta["sessionId"])
    return Conversation(
        path=str(file),
        format=fmt,
        session_id=_str(meta, "sessionId"),
        project_hash=_str(meta, "projectHash") or None,
        start_time=_str(meta, "startTime"),
        last_updated=_str(meta, "lastUpdated"),
        summary=_str(meta, "summary"),
        kind=_kind(meta),
        directories=[d for d in directories if isinstance(d, str)]
        if isinstance(directories, list)
        else [],
        messages=replayed.messages,
        problems=replayed.problems,
        resumable=_gemini_lists(replayed),
        originals=replayed.originals if keep_originals else [],
        parent_id=parent[0] if parent else None,
        parent_call_id=parent[1] if parent else None,
    )


def _gemini_lists(replayed: RecordReplay) -> bool:
    # getAllSessionFiles: a session id, resumable content, and not a subagent.
    return (
        bool(replayed.metadata.get("sessionId"))
        and replayed.resumable
        and (_kind(replayed.metadata) == "main")
    )


def read_session_info(
    path: str | os.PathLike[str], *, project: str | None = None, parent_id: str | None = None
) -> SessionInfo:
    """Summarize a session file for listing: metadata, counts, the first real prompt."""
    file = Path(path)
    replayed, fmt = replay(file, summary=True)
    meta = replayed.metadata
    summaries: Sequence[MessageSummary] = replayed.messages
    first_prompt = next((m.prompt for m in summaries if m.prompt), None)
    return SessionInfo(
        id=_str(meta, "sessionId"),
        path=str(file),
        project=project,
        format=fmt,
        kind=_kind(meta),
        start_time=_str(meta, "startTime"),
        last_updated=_str(meta, "lastUpdated"),
        summary=_str(meta, "summary"),
        first_prompt=first_prompt.strip() if first_prompt else None,
        messages=len(summaries),
        resumable=_gemini_lists(replayed),
        problems=len(replayed.problems),
        parent_id=parent_id,
    )
