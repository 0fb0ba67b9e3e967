"""Antigravity's saved conversations, read-only: which there are, and what each is about.

The harness keeps a conversation in two places under its app data folder
(``$HOME/.gemini/antigravity`` for ``gemwire agent antigravity``): a SQLite database,
``conversations/<id>.db`` (its steps as protobuf blobs; gemwire reads only the workspace it
records, opened ``mode=ro``), and a JSON-lines transcript,
``brain/<id>/.system_generated/logs/transcript.jsonl`` (`wire.antigravity.TranscriptRecord`),
which is what a conversation's prompts, answers, calls and tokens are read from.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import unquote, urlparse

import msgspec

from gemwire.sessions._reading import NotRead, open_session_file
from gemwire.wire.antigravity import TranscriptRecord

__all__ = (
    "SavedConversation",
    "conversation_records",
    "first_prompt",
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


def workspace_of(database: Path) -> str | None:
    """The workspace a conversation's database records (``None``: unreadable, or none)."""
    try:
        uri = f"{database.resolve().as_uri()}?mode=ro"
        with closing(sqlite3.connect(uri, uri=True, timeout=1.0)) as db:
            row = db.execute("SELECT data FROM trajectory_metadata_blob LIMIT 1").fetchone()
    except (sqlite3.Error, OSError, ValueError):
        return None
    if row is None or not isinstance(row[0], bytes):
        return None
    found = _file_uri(row[0])
    return unquote(urlparse(found).path) if found else None


def conversation_records(transcript: Path) -> list[TranscriptRecord]:
    """A transcript's records; a line that does not decode is skipped.

    Raises `NotRead` for a transcript that cannot be opened (missing, too large, not a file).
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


def prompt_text(content: str) -> str:
    """``<USER_REQUEST>\\n…\\n</USER_REQUEST>`` and the metadata after it → the prompt.

    >>> prompt_text("<USER_REQUEST>\\nhi\\n</USER_REQUEST>\\n<ADDITIONAL_METADATA>x")
    'hi'
    """
    start, end = content.find("<USER_REQUEST>"), content.find("</USER_REQUEST>")
    if start < 0 or end < start:
        return content.strip()
    return content[start + len("<USER_REQUEST>") : end].strip()


def saved_conversations(app_data_dir: str | Path) -> list[SavedConversation]:
    """Every conversation with a database, newest first."""
    folder = Path(app_data_dir) / "conversations"
    try:
        databases = [path for path in folder.iterdir() if path.suffix == ".db" and path.is_file()]
    except OSError:
        return []
    saved: list[SavedConversation] = []
    for database in databases:
        session_id = database.stem
        try:
            title = first_prompt(conversation_records(transcript_path(app_data_dir, session_id)))
        except NotRead:
            title = None
        modified = datetime.fromtimestamp(database.stat().st_mtime, tz=UTC)
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
