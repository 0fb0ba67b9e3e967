"""One OpenCode session, read from its database: `OpenCodeConversation`
(`load_opencode_session`).

A session is named by its database and its id, ``<database>#<session id>`` (the ``path``
gemwire lists it with); a database named alone stands for its latest session.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import msgspec

from gemwire._normalize.opencode_session import OpenCodeSessionNormalizer, response_tokens
from gemwire.errors import SessionNotFound
from gemwire.events import Event, ToolCallStarted
from gemwire.protocol.gemini_session import Problem
from gemwire.sessions._jsonl import Response, ResponseTokens, problem_notices
from gemwire.sessions._reading import MAX_SESSION_BYTES
from gemwire.sessions.opencode._database import (
    Unreadable,
    iso_time,
    read_only,
    session_records,
    session_rows,
)
from gemwire.wire.opencode_session import MessageData, PartData, SessionRow, Tokens, ToolState

__all__ = ("OpenCodeConversation", "load_opencode_session", "nested_opencode_events", "split_ref")

_SEPARATOR = "#ses_"


def split_ref(path: str | os.PathLike[str]) -> tuple[Path, str | None]:
    """A session's ``path`` as its database and its id (``None``: the database alone).

    >>> split_ref("/data/opencode.db#ses_abc")
    (PosixPath('/data/opencode.db'), 'ses_abc')
    >>> split_ref("/data/opencode.db")
    (PosixPath('/data/opencode.db'), None)
    """
    text = os.fspath(path)
    database, found, rest = text.rpartition(_SEPARATOR)
    if not found:
        return Path(text), None
    return Path(database), "ses_" + rest


class OpenCodeConversation(msgspec.Struct, frozen=True, kw_only=True):
    """An OpenCode session: its messages, each followed by its parts, and the rows skipped."""

    path: str
    session_id: str | None
    cwd: str | None
    parent_id: str | None
    start_time: str | None
    last_updated: str | None = None
    summary: str | None = None
    """OpenCode's title of the session."""
    records: list[MessageData | PartData]
    problems: list[Problem]

    @property
    def agent(self) -> Literal["opencode"]:
        return "opencode"

    def events(self, *, cwd: str | None = None) -> Iterator[Event]:
        """The normalized events (see docs/sessions.md); ``cwd`` defaults to the session's."""
        normalizer = OpenCodeSessionNormalizer(session_id=self.session_id, cwd=cwd or self.cwd)
        yield from normalizer.start()
        yield from problem_notices(self.agent, self.session_id, self.path, self.problems)
        for record in self.records:
            yield from normalizer.feed(record)
        yield from normalizer.finish()

    def responses(self) -> Iterator[Response]:
        """Every model response's tokens, for usage."""
        for record in self.records:
            if isinstance(record, MessageData) and isinstance(record.tokens, Tokens):
                tokens = response_tokens(record.tokens)
                if not tokens.total_tokens:
                    continue
                counted = ResponseTokens(
                    tokens.input_tokens,
                    tokens.output_tokens - record.tokens.reasoning,
                    tokens.cached_tokens or 0,
                    tokens.total_tokens,
                )
                time: Any = record.time if isinstance(record.time, dict) else {}
                yield (
                    iso_time(time.get("created")),
                    record.modelID,
                    counted,
                    record.tokens.reasoning,
                    0,
                )


def _unread(path: str, why: str) -> OpenCodeConversation:
    return OpenCodeConversation(
        path=path,
        session_id=None,
        cwd=None,
        parent_id=None,
        start_time=None,
        records=[],
        problems=[Problem(line=0, message=why)],
    )


def load_opencode_session(path: str | os.PathLike[str]) -> OpenCodeConversation:
    """Load a session from OpenCode's database (``<database>#<session id>``, or the
    database alone: its latest session).

    Raises `SessionNotFound` if there is no such database or session; anything that keeps
    the database from being read, and any row that is not what OpenCode writes, is reported
    in ``problems``.
    """
    database, session_id = split_ref(path)
    try:
        with read_only(database) as connection:
            rows = (
                session_rows(connection, "WHERE id = ?", session_id)
                if session_id is not None
                else session_rows(connection, "WHERE parent_id IS NULL")[-1:]
            )
            if not rows:
                raise SessionNotFound(f"no OpenCode session {session_id or ''} in {database}")
            row: SessionRow = rows[-1]
            records, problems = session_records(connection, row.id, MAX_SESSION_BYTES)
    except FileNotFoundError:
        raise SessionNotFound(f"no OpenCode database at {database}") from None
    except Unreadable as exc:
        return _unread(os.fspath(path), str(exc))
    return OpenCodeConversation(
        path=f"{database}#{row.id}",
        session_id=row.id,
        cwd=row.directory,
        parent_id=row.parent_id,
        start_time=iso_time(row.time_created),
        last_updated=iso_time(row.time_updated),
        summary=row.title or None,
        records=records,
        problems=problems,
    )


def _subagent_calls(conversation: OpenCodeConversation) -> dict[str, str]:
    """The subagent sessions the session's ``task`` calls started: call id -> session id
    (the call's ``metadata.sessionId``)."""
    calls: dict[str, str] = {}
    for part in conversation.records:
        if not isinstance(part, PartData) or not isinstance(part.state, ToolState):
            continue
        metadata = part.state.metadata
        child = metadata.get("sessionId") if isinstance(metadata, dict) else None
        if isinstance(child, str) and isinstance(part.callID, str):
            calls[part.callID] = child
    return calls


def nested_opencode_events(
    conversation: OpenCodeConversation, *, cwd: str | None = None
) -> Iterator[Event]:
    """The session's events, each subagent session's right after the ``task`` call that
    started it; a subagent's events carry that call's id as ``parent_call_id``."""
    yield from _nested(conversation, cwd, {conversation.session_id})


def _nested(
    conversation: OpenCodeConversation, cwd: str | None, seen: set[str | None]
) -> Iterator[Event]:
    calls = _subagent_calls(conversation)
    database, _ = split_ref(conversation.path)
    for event in conversation.events(cwd=cwd):
        yield event
        if not isinstance(event, ToolCallStarted):
            continue
        child_id = calls.get(event.call_id)
        if child_id is None or child_id in seen:  # a session that names itself: once
            continue
        seen.add(child_id)
        try:
            child = load_opencode_session(f"{database}#{child_id}")
        except SessionNotFound:
            continue  # the call ran no session that was kept
        for sub in _nested(child, cwd, seen):
            linked = isinstance(sub.parent_call_id, str)
            yield sub if linked else msgspec.structs.replace(sub, parent_call_id=event.call_id)
