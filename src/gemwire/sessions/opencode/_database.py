"""OpenCode's database, read-only: its sessions' rows, a session's messages and parts.

Opened through the standard library's sqlite3 as a read-only URI (``mode=ro``): gemwire
never writes it, and reading is safe while OpenCode writes (the database is in WAL mode: a
reader sees the last commit). A database OpenCode holds locked past ``timeout`` seconds, one
cut short, not a database at all, or of a schema without the tables and columns gemwire
reads (`gemwire.wire.opencode_session.SCHEMA`) is `Unreadable`, with why, never a crash.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import msgspec

from gemwire.protocol._undecodable import UNDECODABLE
from gemwire.protocol.gemini_session import Problem
from gemwire.wire.opencode_session import SCHEMA, MessageData, PartData, SessionRow

__all__ = (
    "Unreadable",
    "first_prompts",
    "iso_time",
    "message_counts",
    "messages_by_session",
    "read_only",
    "session_records",
    "session_rows",
)

_MESSAGE = msgspec.json.Decoder(MessageData).decode
_PART = msgspec.json.Decoder(PartData).decode

_SESSION_COLUMNS = ", ".join(SCHEMA["session"])


class Unreadable(Exception):
    """Why OpenCode's database cannot be read (the `Problem` on it)."""


def iso_time(milliseconds: object) -> str | None:
    """OpenCode's clock (milliseconds since the epoch) as the ISO time other agents record.

    >>> iso_time(1795628449054), iso_time("x")
    ('2026-11-25T17:40:49.054Z', None)
    """
    if not isinstance(milliseconds, int) or isinstance(milliseconds, bool):
        return None
    try:
        moment = datetime.fromtimestamp(milliseconds / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _check_schema(connection: sqlite3.Connection) -> None:
    for table, needed in SCHEMA.items():
        columns = {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
        missing = [c for c in needed if c not in columns]
        if missing:
            what = f"no table {table}" if not columns else f"no column {missing[0]} in {table}"
            raise Unreadable(f"a schema gemwire does not know ({what})")


@contextmanager
def read_only(path: Path, *, timeout: float = 2.0) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the database at ``path``, its schema checked.

    Raises `FileNotFoundError` if there is no such file, `Unreadable` for anything else
    that keeps it from being read (and for errors while it is read in the block).
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise Unreadable(f"cannot read it: {exc.strerror}") from exc
    if not stat.S_ISREG(info.st_mode):
        raise Unreadable("not a regular file: not read")
    uri = f"file:{quote(os.fspath(path))}?mode=ro"
    try:
        with closing(sqlite3.connect(uri, uri=True, timeout=timeout)) as connection:
            _check_schema(connection)
            yield connection
    except sqlite3.Error as exc:
        raise Unreadable(str(exc)) from exc


def session_rows(
    connection: sqlite3.Connection, where: str = "", *args: object
) -> list[SessionRow]:
    """The sessions (``where`` a condition on ``session``'s columns), oldest first; a row
    whose columns are not of the types OpenCode writes is left out."""
    query = f"SELECT {_SESSION_COLUMNS} FROM session {where} ORDER BY time_created, id"
    rows = []
    for row in connection.execute(query, args):
        try:
            rows.append(msgspec.convert(dict(zip(SCHEMA["session"], row, strict=True)), SessionRow))
        except msgspec.ValidationError:
            continue
    return rows


_RECORDS = """
    SELECT 0, m.time_created, m.id, '', m.data FROM message m WHERE m.session_id = ?
    UNION ALL
    SELECT 1, m.time_created, m.id, p.id, p.data FROM part p JOIN message m ON m.id = p.message_id
    WHERE p.session_id = ?
    ORDER BY 2, 3, 1, 4
"""
"""A session's messages, each followed by its parts (OpenCode's ids sort by time)."""


def session_records(
    connection: sqlite3.Connection, session_id: str, limit: int
) -> tuple[list[MessageData | PartData], list[Problem]]:
    """A session's messages, each followed by its parts, in order; a row that is not what
    OpenCode writes is a `Problem` (``line``: its place in that order), and rows past
    ``limit`` bytes of data are not read (one `Problem`)."""
    records: list[MessageData | PartData] = []
    problems: list[Problem] = []
    size = 0
    rows = connection.execute(_RECORDS, (session_id, session_id))
    for number, (is_part, _, _, _, data) in enumerate(rows, 1):
        size += len(data) if isinstance(data, (str, bytes)) else 0
        if size > limit:
            problems.append(Problem(line=number, message=f"over {limit:,} bytes: not read"))
            break
        try:
            records.append(_PART(data) if is_part else _MESSAGE(data))
        except (*UNDECODABLE, TypeError) as exc:
            table = "part" if is_part else "message"
            problems.append(Problem(line=number, message=f"not a {table}: {exc}"))
    return records, problems


_MESSAGE_COUNTS = "SELECT session_id, count(*) FROM message GROUP BY session_id"
_USER_PARTS = """
    SELECT m.session_id, p.data FROM message m JOIN part p ON p.message_id = m.id
    WHERE CASE WHEN json_valid(m.data) THEN json_extract(m.data, '$.role') END = 'user'
    ORDER BY m.time_created, m.id, p.id
"""
_MESSAGES = "SELECT session_id, data FROM message ORDER BY session_id, time_created, id"


def message_counts(connection: sqlite3.Connection) -> dict[str, int]:
    """How many messages each session has."""
    return dict(connection.execute(_MESSAGE_COUNTS).fetchall())


def first_prompts(connection: sqlite3.Connection) -> dict[str, str]:
    """Each session's first prompt: the first text of its user messages OpenCode did not
    add itself."""
    prompts: dict[str, str] = {}
    for session_id, data in connection.execute(_USER_PARTS):
        if session_id in prompts:
            continue
        try:
            part = _PART(data)
        except (*UNDECODABLE, TypeError):
            continue
        text = part.text.strip() if isinstance(part.text, str) else ""
        if part.type == "text" and part.synthetic is not True and text:
            prompts[session_id] = text
    return prompts


def messages_by_session(
    connection: sqlite3.Connection,
) -> tuple[dict[str, list[MessageData]], int]:
    """Every session's messages (without their parts), and how many rows were not what
    OpenCode writes."""
    messages: dict[str, list[MessageData]] = {}
    skipped = 0
    for session_id, data in connection.execute(_MESSAGES):
        try:
            messages.setdefault(session_id, []).append(_MESSAGE(data))
        except (*UNDECODABLE, TypeError):
            skipped += 1
    return messages, skipped
