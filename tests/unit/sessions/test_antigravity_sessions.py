"""Antigravity's saved conversations, from the stores the real harness left
(tests/fixtures/antigravity/0.1.22, recorded by tests/e2e/agents/test_antigravity_saved.py):
replayed into their golden events, listed, counted; and a store that is not what the harness
writes (a damaged database, a cut transcript, a FIFO, bytes that are not UTF-8) read with a
notice, never a traceback or a hang."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner
from kit.corpus import FIXTURES

from gemwire.cli import main
from gemwire.events import MessageDelta, Notice
from gemwire.sessions import AntigravityHome, load_session, source, usage
from gemwire.sessions.antigravity._store import models_of, saved_conversations

RECORDINGS = FIXTURES / "antigravity" / "0.1.22"
CASES = ["multi_turn", "denied", "cancel"]


def _home(case: str) -> Path:
    return RECORDINGS / case / "home"


def _transcript(home: Path) -> Path:
    [path] = (home / ".gemini" / "antigravity" / "brain").glob(
        "*/.system_generated/logs/transcript.jsonl"
    )
    return path


def _database(home: Path) -> Path:
    [path] = (home / ".gemini" / "antigravity" / "conversations").glob("*.db")
    return path


@pytest.mark.parametrize("case", CASES)
def test_a_recorded_conversation_gives_its_golden_events(case: str) -> None:
    [info] = source("antigravity", _home(case)).all_sessions()
    assert info.path == str(_transcript(_home(case)))
    assert (info.agent, info.project, info.resumable) == ("antigravity", f"__ROOT__/{case}", True)
    events = [msgspec.to_builtins(e) for e in load_session(info.path).events()]
    golden = (RECORDINGS / f"{case}.events.jsonl").read_text().splitlines()
    assert [json.dumps(e, sort_keys=True) for e in events] == golden


def test_each_model_call_s_model_is_read_from_the_database() -> None:
    models = models_of(_database(_home("multi_turn")))
    # One call per answer: the thought and text, the write, the edit, the shell, "Done."
    assert models == dict.fromkeys([1, 3, 4, 5, 6, 7, 8, 9], "gemini-3.8-flash") | models


def test_usage_counts_every_call_on_its_model_unpriced() -> None:
    report = usage(source("antigravity", _home("multi_turn")), by="model")
    [row] = report.rows
    assert (row.key, row.requests, row.input_tokens, row.output_tokens, row.total_tokens) == (
        "gemini-3.8-flash",
        5,
        500,
        50,
        550,
    )
    assert (row.cost_usd, row.unpriced_models) == (None, ["gemini-3.8-flash"])


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A copy of the multi-turn case's home, to damage."""
    shutil.copytree(_home("multi_turn"), tmp_path / "home")
    return tmp_path / "home"


def _notices(home: Path) -> list[str]:
    loaded = load_session(_transcript(home))
    return [e.message for e in loaded.events() if isinstance(e, Notice)]


def test_a_damaged_database_is_a_notice_and_the_transcript_still_reads(store: Path) -> None:
    database = _database(store)
    database.write_bytes(b"SQLite format 3\0" + b"\xff" * 300)
    [said] = _notices(store)
    assert said.startswith(f"{_transcript(store)}: database not read: {database}: ")
    loaded = AntigravityHome(store).load(_transcript(store))
    assert loaded.cwd is None
    assert [e.type for e in loaded.events()].count("message_delta") == 2
    home = AntigravityHome(store)
    assert home.all_sessions() == []  # the harness cannot resume it: not listed
    info = home.find(str(_transcript(store)))
    assert (info.resumable, info.project, info.problems) == (False, None, 1)
    assert saved_conversations(store / ".gemini" / "antigravity")[0].cwd is None


def test_a_cut_transcript_keeps_what_came_before(store: Path) -> None:
    transcript = _transcript(store)
    data = transcript.read_bytes()
    transcript.write_bytes(data[: len(data) - 40])
    said = _notices(store)
    lines = data.count(b"\n")
    assert len(said) == 1
    assert f"line {lines}: " in said[0]
    events = list(load_session(transcript).events())
    assert [e.text for e in events if isinstance(e, MessageDelta)] == ["First answer."]


def test_bytes_that_are_not_utf8_are_a_notice(store: Path) -> None:
    transcript = _transcript(store)
    lines = transcript.read_bytes().splitlines(keepends=True)
    transcript.write_bytes(
        b"".join([lines[0], b'{"step_index":1,"content":"\xff\xfe"}\n', *lines[1:]])
    )
    [said] = _notices(store)
    assert "line 2: " in said


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_fifos_in_the_store_are_not_opened(store: Path) -> None:
    """Opening a FIFO would wait for a writer: the database and the transcript are read only
    as regular files."""
    database, transcript = _database(store), _transcript(store)
    database.unlink()
    os.mkfifo(database)
    transcript.unlink()
    os.mkfifo(transcript)
    home = AntigravityHome(store)
    assert home.all_sessions() == []
    info = home.find(str(transcript))
    assert (info.resumable, info.problems) == (False, 2)
    said = [e.message for e in home.load(transcript).events() if isinstance(e, Notice)]
    assert len(said) == 2
    assert all("not a regular file" in message for message in said)
    assert saved_conversations(store / ".gemini" / "antigravity") == []


def test_a_symlink_out_of_the_store_is_not_a_transcript(store: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.jsonl"
    outside.write_text(_transcript(store).read_text())
    home = AntigravityHome(store)
    with pytest.raises(Exception, match="is not a transcript in"):
        home.find(str(outside))


def test_the_cli_shows_a_damaged_store_with_a_notice(store: Path) -> None:
    _database(store).write_bytes(b"not a database")
    runner = CliRunner()
    argv = ["sessions", "show", str(_transcript(store)), "--agent", "antigravity"]
    shown = runner.invoke(main, [*argv, "--gemini-home", str(store), "--json"])
    assert shown.exit_code == 0, shown.output
    types = [json.loads(line)["type"] for line in shown.stdout.splitlines()]
    assert types[:2] == ["session_started", "notice"]
    assert "Traceback" not in shown.output


def test_links_in_the_store_that_lead_nowhere_readable(store: Path) -> None:
    """A transcript linked to an endless device, a database linked to itself, a
    conversation's folder that loops: each read as nothing, with why."""
    database, transcript = _database(store), _transcript(store)
    transcript.unlink()
    transcript.symlink_to("/dev/zero")
    database.unlink()
    database.symlink_to(database)
    loop = store / ".gemini" / "antigravity" / "brain" / "loop"
    loop.symlink_to(loop)
    home = AntigravityHome(store)
    assert home.all_sessions() == []
    said = [e.message for e in home.load(transcript).events() if isinstance(e, Notice)]
    assert [("not a regular file" in m, "database not read" in m) for m in said] == [
        (True, False),
        (False, True),
    ]
    report = usage(home)
    assert (report.files, report.problems, report.total.requests) == (1, 2, 0)


def test_the_adapter_lists_a_conversation_whose_transcript_is_gone(store: Path) -> None:
    """``session/list`` reads the same store: a database alone is an untitled conversation
    (its transcript missing used to fail the listing)."""
    _transcript(store).unlink()
    [saved] = saved_conversations(store / ".gemini" / "antigravity")
    assert (saved.session_id, saved.cwd, saved.title) == (
        _database(store).stem,
        "__ROOT__/multi_turn",
        None,
    )
