"""Recording an Antigravity conversation's store (its transcript and its database) into
tests/fixtures/antigravity/<version>/<case>/home, machine paths replaced by placeholders.

The database keeps paths inside protobuf blobs, where a string's length comes before it:
each blob is walked as protobuf (`_scrubbed`), the strings holding a path replaced and every
length above them written again, so the recording still reads as the harness wrote it.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

__all__ = ("record_store",)

Replace = Callable[[str], str]


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _parse(blob: bytes) -> list[tuple[int, int, bytes]] | None:
    """Each field as (key, wire type, its raw bytes after the key); ``None`` if not a message."""
    fields: list[tuple[int, int, bytes]] = []
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
            wire = key & 7
            if key >> 3 == 0:
                return None
            start = at
            if wire == 0:
                varint()
                fields.append((key, wire, blob[start:at]))
            elif wire == 2:
                size = varint()
                at += size
                if at > len(blob):
                    return None
                fields.append((key, wire, blob[at - size : at]))
            elif wire in (1, 5):
                at += 8 if wire == 1 else 4
                if at > len(blob):
                    return None
                fields.append((key, wire, blob[start:at]))
            else:
                return None
    except IndexError:
        return None
    return fields


def _encode(fields: list[tuple[int, int, bytes]]) -> bytes:
    out = bytearray()
    for key, wire, value in fields:
        out += _varint(key)
        out += _varint(len(value)) + value if wire == 2 else value
    return bytes(out)


def _replaced(blob: bytes, replace: Replace) -> bytes:
    return replace(blob.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")


def _scrubbed(blob: bytes, replace: Replace) -> bytes:
    """``blob`` with ``replace`` applied to each string of it that it changes."""
    whole = _replaced(blob, replace)
    if whole == blob:
        return blob
    fields = _parse(blob)
    if fields is None or _encode(fields) != blob:
        return whole  # a string, not a message
    return _encode([(k, w, _scrubbed(v, replace) if w == 2 else v) for k, w, v in fields])


def record_store(app_data: Path, session_id: str, into: Path, replace: Replace) -> None:
    """The conversation's transcript and database, from the app data folder ``app_data``,
    copied into ``into`` (an app data folder, emptied first) with ``replace`` (the machine
    paths' placeholders) applied to their text: the transcript's, and every string of the
    database."""
    shutil.rmtree(into, ignore_errors=True)
    logs = Path("brain") / session_id / ".system_generated" / "logs"
    (into / logs).mkdir(parents=True)
    (into / "conversations").mkdir()
    transcript = (app_data / logs / "transcript.jsonl").read_text()
    (into / logs / "transcript.jsonl").write_text(replace(transcript))
    database = into / "conversations" / f"{session_id}.db"
    with (
        closing(sqlite3.connect(app_data / "conversations" / f"{session_id}.db")) as source,
        closing(sqlite3.connect(database)) as copy,
    ):
        source.backup(copy)
        tables = [
            row[0] for row in copy.execute("SELECT name FROM sqlite_master WHERE type='table'")
        ]
        for table in tables:
            columns = [row[1] for row in copy.execute(f"PRAGMA table_info(`{table}`)")]
            for rowid, *values in copy.execute(f"SELECT rowid, * FROM `{table}`").fetchall():
                for column, value in zip(columns, values, strict=True):
                    if isinstance(value, bytes):
                        new: object = _scrubbed(value, replace)
                    elif isinstance(value, str):
                        new = replace(value)
                    else:
                        continue
                    if new == value:
                        continue
                    copy.execute(
                        f"UPDATE `{table}` SET `{column}` = ? WHERE rowid = ?", (new, rowid)
                    )
        copy.commit()
        copy.execute("PRAGMA journal_mode=DELETE")
        copy.execute("VACUUM")
