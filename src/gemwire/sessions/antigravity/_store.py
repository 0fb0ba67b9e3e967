"""Antigravity's saved conversations, read-only: which there are, and what each is about.

The harness keeps a conversation in two places under its app data folder
(``$HOME/.gemini/antigravity`` for ``gemwire agent antigravity``): a SQLite database,
``conversations/<id>.db`` (its steps as protobuf blobs; gemwire reads only the workspace it
records and the model of each model call, opened ``mode=ro``, and only a regular file: a
FIFO would block the open), and a JSON-lines transcript,
``brain/<id>/.system_generated/logs/transcript.jsonl`` (`wire.antigravity.TranscriptRecord`),
which is what a conversation's prompts, answers, calls and tokens are read from.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import unquote

import msgspec

from gemwire.errors import SessionError
from gemwire.sessions._reading import NotRead, open_session_file
from gemwire.sessions.antigravity._events import prompt_text
from gemwire.wire.antigravity import TranscriptRecord

__all__ = (
    "SavedConversation",
    "conversation_records",
    "database_path",
    "database_problem",
    "first_prompt",
    "models_of",
    "saved_conversations",
    "transcript_path",
    "workspace_of",
)

_records = msgspec.json.Decoder(TranscriptRecord)


class SavedConversation(msgspec.Struct, frozen=True, kw_only=True):
    session_id: str
    database: str
    cwd: str | None
    title: str | None
    updated_at: str | None


def transcript_path(app_data_dir: str | Path, session_id: str) -> Path:
    return (
        Path(app_data_dir)
        / "brain"
        / session_id
        / ".system_generated"
        / "logs"
        / ("transcript.jsonl")
    )


def _fields(blob: bytes) -> list[tuple[int, int, bytes | int]]:
    """A protobuf message's top-level fields (number, wire type, value); ``[]`` if not one."""
    fields: list[tuple[int, int, bytes | int]] = []
    at = 0

    def varint() -> int:
        nonlocal at
        value = shift = 0
        while True:
            byte = blob[at]
            at += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7

    try:
        while at < len(blob):
            key = varint()
            number, wire = key >> 3, key & 7
            if wire == 0:
                fields.append((number, wire, varint()))
            elif wire == 2:
                size = varint()
                if at + size > len(blob):
                    return []
                fields.append((number, wire, blob[at : at + size]))
                at += size
            elif wire in (1, 5):
                at += 8 if wire == 1 else 4
            else:
                return []
    except IndexError:
        return []
    return fields


def _file_uri(blob: bytes, depth: int = 0) -> str | None:
    """The first ``file://`` URI in a protobuf message, nested ones included.

    >>> _file_uri(b"\\x08\\x01:\\x0bfile:///w/a"), _file_uri(b"\\x12\\x05\\x0a\\x03abc")
    ('file:///w/a', None)
    >>> _file_uri(b"\\x12\\xff")  # cut short: not a message
    """
    for _, wire, value in _fields(blob):
        if wire != 2 or not isinstance(value, bytes):
            continue
        if value.startswith(b"file://"):
            return value.decode("utf-8", "replace")
        if depth < 4 and (found := _file_uri(value, depth + 1)):
            return found
    return None


def database_path(app_data_dir: str | Path, session_id: str) -> Path:
    return Path(app_data_dir) / "conversations" / f"{session_id}.db"


class _Unreadable(Exception):
    """Why a database is not read."""


def _query(database: Path, query: str) -> list[tuple[object, ...]]:
    """``query``'s rows, read-only. Raises `_Unreadable` for anything but a SQLite file
    holding the table (missing, a FIFO, damaged, another schema)."""
    try:
        real = database.resolve()
        if not stat.S_ISREG(os.stat(real).st_mode):
            raise _Unreadable("not a regular file")
        with closing(sqlite3.connect(f"{real.as_uri()}?mode=ro", uri=True, timeout=1.0)) as db:
            return db.execute(query).fetchall()
    except FileNotFoundError as exc:
        raise _Unreadable("no such file") from exc
    except (sqlite3.Error, OSError, ValueError, RuntimeError) as exc:
        raise _Unreadable(str(exc)) from exc


def _rows(database: Path, query: str) -> list[tuple[object, ...]]:
    try:
        return _query(database, query)
    except _Unreadable:
        return []


def database_problem(database: Path) -> str | None:
    """Why the conversation's database cannot be read (``None``: it can)."""
    try:
        _query(database, "SELECT count(*) FROM gen_metadata")
    except _Unreadable as exc:
        return f"{database}: {exc}"
    return None


def workspace_of(database: Path) -> str | None:
    """The workspace a conversation's database records (``None``: unreadable, or none)."""
    rows = _rows(database, "SELECT data FROM trajectory_metadata_blob LIMIT 1")
    if not rows or not isinstance(rows[0][0], bytes):
        return None
    found = _file_uri(rows[0][0])
    # Not `urlparse`: a recording's placeholder (``file://__WORKSPACE__``) is a path too.
    return unquote(found.removeprefix("file://")) if found else None


def _packed(blob: bytes) -> list[int]:
    """A packed repeated varint field's values (``[]`` if cut short)."""
    values: list[int] = []
    value = shift = 0
    for byte in blob:
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            values.append(value)
            value = shift = 0
    return values if shift == 0 else []


def models_of(database: Path) -> dict[int, str]:
    """The model of each model call, by the transcript's ``step_index`` of what it answered.

    A ``gen_metadata`` row is one model call: field 2 the steps it produced (packed), field 1
    its request, whose field 19 is the model it ran on (the name prices are looked up by).
    A step two rows name keeps the first.
    """
    models: dict[int, str] = {}
    for (data,) in _rows(database, "SELECT data FROM gen_metadata ORDER BY idx"):
        if not isinstance(data, bytes):
            continue
        fields = _fields(data)
        request = next((v for n, w, v in fields if n == 1 and isinstance(v, bytes)), b"")
        model = next((v for n, w, v in _fields(request) if n == 19 and isinstance(v, bytes)), b"")
        if not model:
            continue
        name = model.decode("utf-8", "replace")
        steps = next((v for n, w, v in fields if n == 2 and isinstance(v, bytes)), b"")
        for step in _packed(steps):
            models.setdefault(step, name)
    return models


def conversation_records(transcript: Path) -> list[TranscriptRecord]:
    """A transcript's records; a line that does not decode is skipped.

    Raises `NotRead` for a transcript too large or not a file, `SessionNotFound` for a
    missing one, `SessionError` for one that cannot be read.
    """
    with open_session_file(transcript) as file:
        data = file.read()
    records: list[TranscriptRecord] = []
    for line in data.splitlines():
        try:
            records.append(_records.decode(line))
        except (msgspec.DecodeError, UnicodeDecodeError):
            continue
    return records


def first_prompt(records: list[TranscriptRecord]) -> str | None:
    """The first prompt, without the tags the harness wraps it in."""
    for record in records:
        if record.type == "USER_INPUT":
            return prompt_text(record.content)
    return None


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except (OSError, ValueError):
        return False


def saved_conversations(app_data_dir: str | Path) -> list[SavedConversation]:
    """Every conversation with a database, newest first."""
    folder = Path(app_data_dir) / "conversations"
    try:
        databases = [path for path in folder.iterdir() if path.suffix == ".db" and _regular(path)]
    except OSError:
        return []
    saved: list[SavedConversation] = []
    for database in databases:
        session_id = database.stem
        try:
            title = first_prompt(conversation_records(transcript_path(app_data_dir, session_id)))
        except (NotRead, SessionError):  # no transcript (yet), or not a file: untitled
            title = None
        try:
            modified = datetime.fromtimestamp(database.stat().st_mtime, tz=UTC)
        except OSError:  # gone since listed
            continue
        saved.append(
            SavedConversation(
                session_id=session_id,
                database=str(database),
                cwd=workspace_of(database),
                title=title,
                updated_at=modified.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            )
        )
    saved.sort(key=lambda conversation: conversation.updated_at or "", reverse=True)
    return saved
