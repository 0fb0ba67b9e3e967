"""OpenCode's database, read-only: its sessions' rows, a session's messages and parts.

Opened through the standard library's sqlite3 as a read-only URI (``mode=ro``): gemwire
never writes it, and reading is safe while OpenCode writes (the database is in WAL mode: a
reader sees the last commit). A database OpenCode holds locked past ``timeout`` seconds, one
cut short, not a database at all, or of a schema without the tables and columns gemwire
reads (`gemwire.wire.opencode_session.SCHEMA`) is `Unreadable`, with why, never a crash.

A value that is not UTF-8 (SQLite stores what it is given) is read as Node reads it, with
U+FFFD: a row's ``data`` is taken as bytes and decoded as a session file's line is
(`LineDecoder`: a `Problem` on that row says so), any other text column is replaced
quietly. Without that, sqlite3 raises on the row, and the whole database reads as empty.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

import msgspec

from gemwire.protocol.gemini_session import Problem
from gemwire.protocol.jsonl_records import LineDecoder
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
    "session_stamps",
)

_text = functools.partial(str, encoding="utf-8", errors="replace")
"""sqlite3's ``text_factory``: a text column as text, whatever bytes it holds."""

_SESSION_COLUMNS = ", ".join(SCHEMA["session"])

R = TypeVar("R")


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


_STAMP_COLUMNS = {
    "session": ("time_updated",),
    "message": ("time_updated",),
    "part": ("time_updated",),
}
"""What `session_stamps` reads besides `SCHEMA` (OpenCode 1.18.33 sets it on every write)."""


def _check_schema(connection: sqlite3.Connection) -> None:
    for table, read in SCHEMA.items():
        needed = (*read, *_STAMP_COLUMNS.get(table, ()))
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
            connection.text_factory = _text
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
    SELECT 0, m.time_created, m.id, '', CAST(m.data AS BLOB) FROM message m WHERE m.session_id = ?
    UNION ALL
    SELECT 1, m.time_created, m.id, p.id, CAST(p.data AS BLOB)
    FROM part p JOIN message m ON m.id = p.message_id
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
    message = LineDecoder(MessageData, problems, "message")
    part = LineDecoder(PartData, problems, "part")
    size = 0
    rows = connection.execute(_RECORDS, (session_id, session_id))
    for number, (is_part, _, _, _, data) in enumerate(rows, 1):
        size += len(data) if isinstance(data, bytes) else 0
        if size > limit:
            problems.append(Problem(line=number, message=f"over {limit:,} bytes: not read"))
            break
        record: MessageData | PartData | None = (
            _decoded(part, data, number, checked=True)
            if is_part
            else _decoded(message, data, number, checked=True)
        )
        if record is not None:
            records.append(record)
    return records, problems


def _decoded(
    decoder: LineDecoder[R], data: object, number: int, *, checked: bool = False
) -> R | None:
    """A row's ``data`` (bytes; else NULL) decoded; ``checked``: its invalid UTF-8 is found
    even in the fields the record type skips (as in a loaded file)."""
    if not isinstance(data, bytes):
        decoder.problems.append(Problem(line=number, message=f"no JSON text: {data!r}"))
        return None
    return decoder.decode(decoder.checked(data, number) if checked else data, number)


_MESSAGE_COUNTS = "SELECT session_id, count(*) FROM message GROUP BY session_id"
_USER_PARTS = """
    SELECT m.session_id, CAST(p.data AS BLOB) FROM message m JOIN part p ON p.message_id = m.id
    WHERE CASE WHEN json_valid(m.data) THEN json_extract(m.data, '$.role') END = 'user'
    ORDER BY m.time_created, m.id, p.id
"""
_MESSAGES = """
    SELECT session_id, CAST(data AS BLOB) FROM message ORDER BY session_id, time_created, id
"""


_STAMPS = """
    SELECT s.id, s.time_updated, m.updated, m.rows, p.updated, p.rows FROM session s
    LEFT JOIN (SELECT session_id, max(time_updated) AS updated, count(*) AS rows
               FROM message GROUP BY session_id) m ON m.session_id = s.id
    LEFT JOIN (SELECT session_id, max(time_updated) AS updated, count(*) AS rows
               FROM part GROUP BY session_id) p ON p.session_id = s.id
"""


def session_stamps(connection: sqlite3.Connection) -> dict[str, tuple[int, ...]]:
    """What changes whenever OpenCode writes to a session, by session: its row's
    ``time_updated``, and the latest ``time_updated`` and the number of its messages and of
    its parts (a row deleted lowers a count)."""
    stamps: dict[str, tuple[int, ...]] = {}
    for session_id, *values in connection.execute(_STAMPS):
        stamps[session_id] = tuple(v if isinstance(v, int) else -1 for v in values)
    return stamps


def message_counts(connection: sqlite3.Connection) -> dict[str, int]:
    """How many messages each session has."""
    return dict(connection.execute(_MESSAGE_COUNTS).fetchall())


def first_prompts(connection: sqlite3.Connection) -> dict[str, str]:
    """Each session's first prompt: the first text of its user messages OpenCode did not
    add itself."""
    prompts: dict[str, str] = {}
    decoder = LineDecoder(PartData, [])
    for session_id, data in connection.execute(_USER_PARTS):
        if session_id in prompts:
            continue
        part = _decoded(decoder, data, 0)
        text = part.text.strip() if part is not None and isinstance(part.text, str) else ""
        if part is not None and part.type == "text" and part.synthetic is not True and text:
            prompts[session_id] = text
    return prompts


def messages_by_session(
    connection: sqlite3.Connection,
) -> tuple[dict[str, list[MessageData]], int]:
    """Every session's messages (without their parts), and how many rows were not what
    OpenCode writes or were repaired."""
    messages: dict[str, list[MessageData]] = {}
    decoder = LineDecoder(MessageData, [])
    for session_id, data in connection.execute(_MESSAGES):
        message = _decoded(decoder, data, 0)
        if message is not None:
            messages.setdefault(session_id, []).append(message)
    return messages, len(decoder.problems)
