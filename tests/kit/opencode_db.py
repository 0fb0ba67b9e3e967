"""OpenCode's database as a recording: SQL text (tests/fixtures/opencode), and back.

A recording keeps the whole schema, and the rows of the tables a session is read from
(``session``, ``message``, ``part``) with those that say which project and schema version
they belong to (``project``, ``migration``); OpenCode's event log and the rest are left out.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

__all__ = ("build", "dump")

_KEPT = ("session", "message", "part", "project", "migration")


def dump(database: Path) -> str:
    """The database at ``database`` as SQL text (read-only)."""
    with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as connection:
        lines = [
            line
            for line in connection.iterdump()
            if not line.startswith("INSERT INTO") or line.split('"')[1] in _KEPT
        ]
    return "\n".join(lines) + "\n"


def build(sql: str, database: Path) -> Path:
    """A database at ``database`` made from a recording's SQL text."""
    database.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(database)) as connection:
        connection.executescript(sql)
    return database


def merged(sqls: list[str], database: Path) -> Path:
    """One database at ``database`` holding the sessions of every recording in ``sqls``
    (the first one's schema, project and migrations)."""
    build(sqls[0], database)
    with closing(sqlite3.connect(database)) as connection:
        for n, sql in enumerate(sqls[1:]):
            other = build(sql, database.with_name(f"part-{n}.db"))
            connection.execute("ATTACH DATABASE ? AS other", (str(other),))
            for table in ("session", "message", "part"):
                connection.execute(f"INSERT INTO {table} SELECT * FROM other.{table}")
            connection.commit()
            connection.execute("DETACH DATABASE other")
            other.unlink()
    return database
