"""One Antigravity conversation as a session: its transcript (the session's file) with what
its database adds, the workspace and the model of each call.

The transcript's records name neither the conversation nor its workspace: the id is the
transcript's folder (``brain/<id>/``), the workspace and the models are in
``conversations/<id>.db`` (`_store`). Records are kept in file order and read in step order
(the harness may write a step's record before the one before it).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import msgspec

from gemwire.events import Event
from gemwire.protocol.gemini_session import Problem
from gemwire.sessions._jsonl import (
    JsonlConversation,
    JsonlFormat,
    Response,
    ResponseTokens,
    load_jsonl,
    problem_notices,
    read_jsonl_info,
)
from gemwire.sessions._summary import SessionInfo
from gemwire.sessions.antigravity._events import TranscriptNormalizer, model_at, prompt_text
from gemwire.sessions.antigravity._store import (
    database_path,
    database_problem,
    models_of,
    workspace_of,
)
from gemwire.wire.antigravity import TranscriptRecord

__all__ = (
    "ANTIGRAVITY",
    "AntigravityConversation",
    "conversation_of",
    "load_antigravity_session",
    "read_antigravity_info",
    "responses",
)


def _prompt(record: TranscriptRecord) -> str | None:
    return prompt_text(record.content) if record.type == "USER_INPUT" else None


def _said(record: TranscriptRecord) -> bool:
    return record.type == "USER_INPUT" or (
        record.type == "PLANNER_RESPONSE" and bool(record.content)
    )


def responses(
    records: Iterable[TranscriptRecord], models: dict[int, str] | None = None
) -> Iterator[Response]:
    """Each model call's tokens (a ``PLANNER_RESPONSE`` that records them; a cancelled
    call's does not), with its model; thoughts are not recorded apart."""
    for record in records:
        if record.type != "PLANNER_RESPONSE" or record.input_tokens is None:
            continue
        spent, said = record.input_tokens, record.output_tokens or 0
        tokens = ResponseTokens(spent, said, record.cache_read_tokens or 0, spent + said)
        model = model_at(models or {}, record.step_index)
        yield record.created_at or None, model, tokens, 0, 0


ANTIGRAVITY: JsonlFormat[TranscriptRecord, TranscriptRecord] = JsonlFormat(
    agent="antigravity",
    record=TranscriptRecord,
    light=TranscriptRecord,
    normalizer=lambda sid, cwd: TranscriptNormalizer(sid, cwd),
    prompt=_prompt,
    said=_said,
    session_id=lambda r: None,  # the folder's (`conversation_of`)
    cwd=lambda r: None,  # the database's
    timestamp=lambda r: r.created_at or None,
    responses=responses,
)
"""``transcript.jsonl``'s records (google-antigravity 0.1.22)."""


def conversation_of(path: str | os.PathLike[str]) -> tuple[str, Path] | None:
    """The conversation a transcript belongs to and its app data folder, from its path
    (``<app data>/brain/<id>/.system_generated/logs/transcript.jsonl``); ``None`` if it is
    not one's.

    >>> conversation_of("/a/brain/c1/.system_generated/logs/transcript.jsonl")
    ('c1', PosixPath('/a'))
    >>> conversation_of("/a/c1/transcript.jsonl")
    """
    file = Path(path)
    logs = file.parent
    if (file.name, logs.name, logs.parent.name) != (
        "transcript.jsonl",
        "logs",
        ".system_generated",
    ):
        return None
    conversation = logs.parent.parent
    if conversation.parent.name != "brain":
        return None
    return conversation.name, conversation.parent.parent


class AntigravityConversation(JsonlConversation[TranscriptRecord], frozen=True, kw_only=True):
    """An Antigravity transcript: its records, the lines skipped, and the model of each
    model call by step (from the database; ``{}`` without one)."""

    format = ANTIGRAVITY
    models: dict[int, str] = msgspec.field(default_factory=dict)

    def ordered(self) -> list[TranscriptRecord]:
        return sorted(self.records, key=lambda record: record.step_index)

    def events(self, *, cwd: str | None = None) -> Iterator[Event]:
        sid = self.session_id
        normalizer = TranscriptNormalizer(sid, cwd or self.cwd, self.models)
        yield from normalizer.start()
        yield from problem_notices(self.agent, sid, self.path, self.problems)
        for record in self.ordered():
            yield from normalizer.feed(record)
        yield from normalizer.finish()


def load_antigravity_session(path: str | os.PathLike[str]) -> AntigravityConversation:
    """Load a transcript, with its conversation's id, workspace and models (`load_jsonl`).

    Raises `SessionNotFound` if there is no such file, `SessionError` if it cannot be read.
    """
    loaded = load_jsonl(path, AntigravityConversation)
    found = conversation_of(path)
    if found is None:
        return loaded
    session_id, app_data = found
    database = database_path(app_data, session_id)
    unread = database_problem(database)
    problems = loaded.problems
    if unread is not None:  # the transcript is still read: no workspace, no models
        problems = [*problems, Problem(line=0, message=f"database not read: {unread}")]
    return msgspec.structs.replace(
        loaded,
        session_id=session_id,
        cwd=workspace_of(database),
        models=models_of(database),
        problems=problems,
    )


def read_antigravity_info(path: str | os.PathLike[str]) -> SessionInfo:
    """Summarize a transcript for listing: resumable when its conversation has a readable
    database (what the harness resumes from) and a prompt.

    Raises `SessionNotFound` if there is no such file, `SessionError` if it cannot be read.
    """
    info = read_jsonl_info(path, AntigravityConversation)
    found = conversation_of(path)
    if found is None:
        return info
    session_id, app_data = found
    database = database_path(app_data, session_id)
    unread = database_problem(database)
    return msgspec.structs.replace(
        info,
        id=session_id,
        project=workspace_of(database) if unread is None else None,
        resumable=unread is None and info.first_prompt is not None,
        problems=info.problems + (unread is not None),
    )
