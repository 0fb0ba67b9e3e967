"""`gemwire usage --agent all` and `gemwire sessions search` on a big home of every agent.

    .venv/bin/python bench/every_agent.py [--sessions 10000] [--repeat 3]

The home holds ``--sessions`` sessions of each of Gemini CLI, Claude Code, Codex, Qwen Code
and OpenCode: Gemini's made by tests/unit/sessions/usage_home.py (as bench/usage.py makes
them), the JSON-lines agents' by copying their recordings (tests/fixtures/<agent>) again and
again under new session ids, OpenCode's as rows of one database in its real schema (its
recordings' rows, tests/fixtures/opencode, copied under new session, message and part ids),
across the same three projects. Timed warm (after one run that writes the listing and search
indexes), best of ``--repeat``: reading every file's bytes (the floor), `usage(agent="all")`,
the first result of `search` for a text most sessions hold (``made.txt``), and whole
searches for a text a few sessions hold and for one none holds; then one OpenCode session
written to (a part's text and time changed, as OpenCode writes one) and the search again:
only that session is read again.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import os
import sqlite3
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1] / "tests"
OPENCODE = TESTS / "fixtures" / "opencode" / "1.18.33"
NEEDLE = "needle-1234"


def _helper(name: str, path: Path) -> Any:
    # The helpers import the recorded corpus as pytest does, from tests/.
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_home(home: Path, sessions: int) -> list[Path]:
    """Every agent's ``sessions`` sessions in ``home``; one of Claude Code's, Codex's, Qwen
    Code's and OpenCode's hold the word ``needle-1234`` (in their prompt)."""
    usage_home = _helper("usage_home", TESTS / "unit" / "sessions" / "usage_home.py")
    import kit.jsonl_agents as jsonl  # on the path _helper put tests/ on

    usage_home.make_home(home, sessions)
    made = []
    for spec in jsonl.JSONL_AGENTS:
        recordings = [
            (spec.recordings / f"{case}.jsonl").read_text()
            for case in jsonl.cases_of(spec.recordings)
        ]
        for n in range(sessions):
            text = recordings[n % len(recordings)]
            workspace = usage_home.PROJECTS[n % len(usage_home.PROJECTS)]
            old = spec.session_id(text)
            new = str(uuid.UUID(int=(n + 1) << 64 | hash(spec.agent) & 0xFFFF))
            text = text.replace("__WORKSPACE__", workspace).replace(old, new)
            if n == sessions // 2:
                text = text.replace('"go"', f'"go {NEEDLE}"')
            folder = spec.folder(home, Path(workspace))
            folder.mkdir(parents=True, exist_ok=True)
            made.append(folder / spec.file_name(new))
            made[-1].write_text(text)
    database = home / ".local" / "share" / "opencode" / "opencode.db"
    make_opencode(database, sessions, usage_home.PROJECTS)
    made.append(database)
    return made


Rows = list[tuple[Any, ...]]


def make_opencode(database: Path, sessions: int, projects: tuple[str, ...]) -> None:
    """OpenCode's database with ``sessions`` sessions: its recordings' sessions (main ones,
    every case) copied again and again, each with its messages and parts under new ids (the
    ids inside their JSON too), the copy's place in time and its project; the one in the
    middle holds `NEEDLE` in its prompt."""
    from kit import opencode_db  # on the path _helper put tests/ on

    recorded = [p.read_text() for p in sorted(OPENCODE.glob("*.sql")) if p.stem != "subagent"]
    scratch = database.with_name("recordings.db")
    opencode_db.merged(recorded, scratch)
    cases: list[tuple[tuple[Any, ...], Rows, Rows]] = []
    with closing(sqlite3.connect(scratch)) as source:
        for row in source.execute("SELECT * FROM session WHERE parent_id IS NULL ORDER BY id"):
            by_session = (row[0],)
            cases.append(
                (
                    row,
                    source.execute(
                        "SELECT * FROM message WHERE session_id = ?", by_session
                    ).fetchall(),
                    source.execute(
                        "SELECT * FROM part WHERE session_id = ?", by_session
                    ).fetchall(),
                )
            )
    scratch.unlink()
    opencode_db.build(recorded[0], database)
    with closing(sqlite3.connect(database)) as connection:
        for table in ("part", "message", "session"):
            connection.execute(f"DELETE FROM {table}")
        for n in range(sessions):
            session, messages, parts = cases[n % len(cases)]
            renames = {session[0]: f"ses_{n:026d}"}
            renames |= {m[0]: f"{m[0]}{n:08d}" for m in messages}
            renames |= {p[0]: f"{p[0]}{n:08d}" for p in parts}

            def moved(row: tuple[Any, ...], n: int = n, renames: dict[str, str] = renames) -> Any:
                project = projects[n % len(projects)]
                shift = n * 60_000  # a minute apart
                out = []
                for value in row:
                    if isinstance(value, str):
                        value = value.replace("__WORKSPACE__", project)
                        for old, new in renames.items():
                            value = value.replace(old, new)
                        if n == sessions // 2:
                            value = value.replace('"text":"go"', f'"text":"go {NEEDLE}"')
                    elif isinstance(value, int) and value > 1_000_000_000_000:  # a time
                        value += shift
                    out.append(value)
                return tuple(out)

            for table, rows in (("session", [session]), ("message", messages), ("part", parts)):
                if rows:
                    marks = ", ".join("?" * len(rows[0]))
                    connection.executemany(
                        f"INSERT INTO {table} VALUES ({marks})", [moved(r) for r in rows]
                    )
        connection.commit()
        connection.execute("PRAGMA journal_mode=WAL")  # as OpenCode keeps it


def touch_one_opencode_session(database: Path, session_id: str) -> None:
    """What OpenCode does to a session when it writes to it: a part's text and time
    changed, the message's and the session's times too."""
    with closing(sqlite3.connect(database)) as connection:
        [(part, message, data)] = connection.execute(
            "SELECT id, message_id, data FROM part WHERE session_id = ? AND data LIKE ?"
            " ORDER BY id LIMIT 1",
            (session_id, '%"type":"text"%'),
        ).fetchall()
        now = int(time.time() * 1000)
        text = data.replace('"text":"', '"text":"touched ', 1)
        connection.execute(
            "UPDATE part SET data = ?, time_updated = ? WHERE id = ?", (text, now, part)
        )
        connection.execute("UPDATE message SET time_updated = ? WHERE id = ?", (now, message))
        connection.execute("UPDATE session SET time_updated = ? WHERE id = ?", (now, session_id))
        connection.commit()


def every_file(home: Path) -> list[Path]:
    return [Path(root) / name for root, _, names in os.walk(home) for name in names]


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gemwire-bench-") as tmp:
        home = Path(tmp) / "home"
        os.environ |= {
            "XDG_CACHE_HOME": str(Path(tmp) / "cache"),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "CODEX_HOME": str(home / ".codex"),
            "QWEN_HOME": str(home / ".qwen"),
            "QWEN_RUNTIME_DIR": "",
            "XDG_DATA_HOME": str(home / ".local" / "share"),
        }
        os.environ.pop("OPENCODE_DB", None)
        make_home(home, args.sessions)
        from gemwire.sessions import search, sources, usage

        def homes() -> list[Any]:
            return sources("all", home)

        def read_all() -> int:
            return sum(len(p.read_bytes()) for p in every_file(home))

        def usage_all() -> int:
            return usage(homes(), by="day").total.requests

        def first_hit() -> int:
            return len(list(itertools.islice(search("made.txt", homes()), 1)))

        def one_hit() -> int:
            return len(list(search(NEEDLE, homes())))

        def no_hit() -> int:
            return len(list(search("no session holds this", homes())))

        cold_usage, _ = timed(usage_all)
        cold_search, _ = timed(no_hit)  # reads every file, writes the search indexes
        contenders = (read_all, usage_all, first_hit, one_hit, no_hit)
        rounds = [[timed(fn) for fn in contenders] for _ in range(args.repeat)]
        best = [min(column, key=lambda r: r[0]) for column in zip(*rounds, strict=True)]
        (read_s, size), (usage_s, requests), (first_s, _), (one_s, ones), (none_s, _) = best
        database = home / ".local" / "share" / "opencode" / "opencode.db"
        touch_one_opencode_session(database, f"ses_{args.sessions // 3:026d}")
        touched_s, _ = timed(no_hit)
        files = len(every_file(home))
        print(
            f"5 agents x {args.sessions} sessions ({files} files, {int(size) / 1e6:.1f} MB), "
            f"warm, best of {args.repeat}:"
        )
        print(f"  read every file's bytes            {read_s:7.3f} s")
        print(f"  usage(agent='all')                 {usage_s:7.3f} s  ({requests:,} requests)")
        print(f"  search: first result (made.txt)    {first_s:7.3f} s")
        print(f"  search: all of {NEEDLE!r}       {one_s:7.3f} s  ({ones} sessions)")
        print(f"  search: a text no session holds    {none_s:7.3f} s")
        print(f"  search after one OpenCode session changed {touched_s:7.3f} s")
        print(f"  cold (no index): usage {cold_usage:.3f} s, search {cold_search:.3f} s")
        from gemwire.sessions._search_index import SearchIndex

        indexes = {s.agent: SearchIndex(s.agent, str(s.home)).path for s in homes()}
        # Only the five agents this bench writes sessions for have an index.
        sizes = {agent: path.stat().st_size for agent, path in indexes.items() if path.exists()}
        shown = ", ".join(f"{agent} {size / 1e6:.1f}" for agent, size in sizes.items())
        print(f"  search index: {sum(sizes.values()) / 1e6:.1f} MB ({shown})")


if __name__ == "__main__":
    main()
