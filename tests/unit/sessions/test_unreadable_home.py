"""A home whose sessions cannot be read (OpenCode's database locked, cut short, not one; a
sessions folder that is a file or a link that loops) is named, with why, by `list`,
`search` and `usage`: not "no sessions"."""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from kit.corpus import FIXTURES
from kit.opencode_db import build

from gemwire.cli import main
from gemwire.sessions import ClaudeHome, GeminiHome, OpenCodeHome, search, usage

ANSWER = FIXTURES / "opencode" / "1.18.33" / "answer.sql"


def _run(tmp_path: Path, *args: str) -> Result:
    env = {
        "HOME": str(tmp_path),
        "GEMINI_CLI_HOME": str(tmp_path),
        "CLAUDE_CONFIG_DIR": str(tmp_path / ".claude"),
        "CODEX_HOME": str(tmp_path / ".codex"),
        "QWEN_HOME": str(tmp_path / ".qwen"),
        "QWEN_RUNTIME_DIR": "",
        "XDG_DATA_HOME": str(tmp_path / ".local" / "share"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "OPENCODE_DB": "",
    }
    return CliRunner(env=env).invoke(main, list(args))


def _database(tmp_path: Path) -> Path:
    return tmp_path / ".local" / "share" / "opencode" / "opencode.db"


def _not_a_database(tmp_path: Path) -> tuple[Path, str]:
    database = _database(tmp_path)
    database.parent.mkdir(parents=True)
    database.write_text("not a database\n" * 100)
    return database, "file is not a database"


def _cut_short(tmp_path: Path) -> tuple[Path, str]:
    database = build(ANSWER.read_text(), _database(tmp_path))
    whole = database.read_bytes()
    database.write_bytes(whole[: len(whole) // 3])
    return database, "database disk image is malformed"


@pytest.mark.parametrize("broken", [_not_a_database, _cut_short])
def test_an_opencode_database_that_cannot_be_read_is_named(tmp_path: Path, broken: object) -> None:
    database, why = broken(tmp_path)  # type: ignore[operator]
    warning = f"gemwire: cannot read OpenCode's sessions in {database}: {why}\n"
    listed = _run(tmp_path, "sessions", "list", "--agent", "opencode", "--all-projects")
    assert (listed.exit_code, listed.stdout, listed.stderr) == (
        0,
        "",
        warning + "No sessions found.\n",
    )
    every = _run(tmp_path, "sessions", "list", "--agent", "all", "--all-projects", "--json")
    assert (every.exit_code, every.stdout, every.stderr) == (0, "", warning)
    found = _run(tmp_path, "sessions", "search", "go")
    assert (found.exit_code, found.stderr) == (1, warning + "No sessions hold that text.\n")
    counted = _run(tmp_path, "usage", "--agent", "all", "--json")
    assert (counted.exit_code, counted.stderr) == (0, warning)
    assert json.loads(counted.stdout)["problems"] == 1
    report = _run(tmp_path, "usage", "--agent", "opencode")
    assert (report.exit_code, report.stderr) == (0, warning)
    assert " ".join(report.stdout.split()) == (
        "No model responses found in the saved sessions. 1 problem reading the saved sessions"
        " (lines skipped or repaired; files, folders or databases not read, and not counted)."
    )


def test_a_locked_opencode_database_is_named(tmp_path: Path) -> None:
    database = build(ANSWER.read_text(), _database(tmp_path))
    home = OpenCodeHome(tmp_path)
    with closing(sqlite3.connect(database, isolation_level=None)) as writer:
        writer.execute("BEGIN EXCLUSIVE")
        assert home.all_sessions() == []
        assert home.unread == {str(database): "database is locked"}
        writer.execute("ROLLBACK")
    assert len(home.all_sessions()) == 1


def test_a_sessions_folder_that_cannot_be_listed_is_named(tmp_path: Path) -> None:
    """A file where the folder should be, a link that loops (root reads any folder, so no
    permission test)."""
    projects = tmp_path / ".claude" / "projects"
    projects.parent.mkdir()
    projects.write_text("not a folder")
    chats = tmp_path / ".gemini" / "tmp"
    chats.parent.mkdir()
    os.symlink(chats, chats)  # a loop
    claude, gemini = ClaudeHome(tmp_path), GeminiHome(tmp_path)
    assert claude.all_sessions() == gemini.all_sessions() == []
    assert claude.unread == {str(projects): "Not a directory"}
    assert gemini.unread == {str(chats): "Too many levels of symbolic links"}
    assert list(search("go", [claude, gemini])) == []
    assert usage([ClaudeHome(tmp_path), GeminiHome(tmp_path)]).problems == 2
    listed = _run(tmp_path, "sessions", "list", "--agent", "all", "--all-projects")
    assert listed.stderr.splitlines() == [
        f"gemwire: cannot read Gemini's sessions in {chats}: Too many levels of symbolic links",
        f"gemwire: cannot read Claude Code's sessions in {projects}: Not a directory",
        "No sessions found.",
    ]


def test_a_home_that_does_not_exist_is_no_warning(tmp_path: Path) -> None:
    listed = _run(tmp_path, "sessions", "list", "--agent", "all", "--all-projects")
    assert (listed.exit_code, listed.stderr) == (0, "No sessions found.\n")
