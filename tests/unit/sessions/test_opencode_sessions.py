"""OpenCode's saved sessions, read from its database: the recordings' golden events, the
wire types held strictly to them, a database that is locked, cut short, of an unknown schema
or not one at all, the home (its env vars, listing, lookups, usage), reading while OpenCode
writes, and the CLI."""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st
from kit.corpus import FIXTURES
from kit.hostile import CUT_TEXT, cut_text
from kit.opencode_db import build, merged

from gemwire.cli import main
from gemwire.cli.safe_text import terminal_safe_event
from gemwire.events import FileChanged, Notice, ToolCallFinished, ToolCallStarted, encode_event
from gemwire.protocol._strict import unknown_fields
from gemwire.sessions import (
    OpenCodeConversation,
    OpenCodeHome,
    load_session,
    nested_opencode_events,
    search,
    to_markdown,
    usage,
)
from gemwire.sessions.opencode import load_opencode_session
from gemwire.wire.opencode_session import MessageData, PartData

RECORDINGS = FIXTURES / "opencode" / "1.18.33"
CASES = sorted(p.stem for p in RECORDINGS.glob("*.sql") if p.stem != "subagent")
"""The cases of test_agents_offline.py, and two prompts on one session (``multi_turn``);
``subagent.sql`` is a ``task`` subagent's run (test_opencode_subagent_saved.py)."""


def test_every_case_is_recorded() -> None:
    assert CASES == [
        "answer",
        "cancel",
        "edit",
        "multi_turn",
        "shell",
        "shell_denied",
        "tool_error",
        "write",
        "write_denied",
    ]


def _database(tmp_path: Path, case: str) -> Path:
    return build((RECORDINGS / f"{case}.sql").read_text(), tmp_path / "opencode.db")


@pytest.mark.parametrize("case", CASES)
def test_golden_events(case: str, tmp_path: Path) -> None:
    conversation = load_session(_database(tmp_path, case))
    assert isinstance(conversation, OpenCodeConversation)
    assert conversation.problems == []
    events = [msgspec.to_builtins(e) for e in conversation.events()]
    golden = (RECORDINGS / f"{case}.events.jsonl").read_text().splitlines()
    assert events == [json.loads(line) for line in golden]


@pytest.mark.parametrize("case", CASES)
def test_the_wire_types_declare_every_recorded_field(case: str, tmp_path: Path) -> None:
    with closing(sqlite3.connect(_database(tmp_path, case))) as connection:
        for table, kind in (("message", MessageData), ("part", PartData)):
            for (data,) in connection.execute(f"SELECT data FROM {table}"):
                assert unknown_fields(json.loads(data), kind) == []


def test_tool_kinds_results_and_changes(tmp_path: Path) -> None:
    edit = list(load_session(_database(tmp_path / "edit", "edit")).events())
    started = [(e.name, e.kind) for e in edit if isinstance(e, ToolCallStarted)]
    assert started == [("read", "read"), ("edit", "edit")]
    changed = [(e.path, e.change, e.derived) for e in edit if isinstance(e, FileChanged)]
    assert changed == [("__WORKSPACE__/a.txt", "modified", False)]
    write = list(load_session(_database(tmp_path / "write", "write")).events())
    written = [(e.path, e.change) for e in write if isinstance(e, FileChanged)]
    assert written == [("__WORKSPACE__/hello.txt", "created")]
    denied = list(load_session(_database(tmp_path / "denied", "shell_denied")).events())
    [finished] = [e for e in denied if isinstance(e, ToolCallFinished)]
    refusal = "The user rejected permission to use this specific tool call."
    assert (finished.status, finished.output) == ("failed", refusal)


def test_a_cancelled_turn_keeps_its_text_and_says_it_was_aborted(tmp_path: Path) -> None:
    events = list(load_session(_database(tmp_path, "cancel")).events())
    assert [e.type for e in events] == [
        "session_started",
        "user_message",
        "message_delta",
        "notice",
    ]
    assert isinstance(events[-1], Notice)
    assert (events[-1].message, events[-1].severity) == ("turn aborted", "info")


def _problem(path: Path) -> str:
    conversation = load_opencode_session(path)
    assert (conversation.session_id, conversation.records) == (None, [])
    [problem] = conversation.problems
    return problem.message


def test_a_locked_database_is_a_problem_not_a_hang(tmp_path: Path) -> None:
    database = _database(tmp_path, "answer")
    with closing(sqlite3.connect(database, isolation_level=None)) as writer:
        writer.execute("BEGIN EXCLUSIVE")
        assert _problem(database) == "database is locked"
        writer.execute("ROLLBACK")
    assert load_opencode_session(database).problems == []


def test_a_database_cut_short_or_not_one_is_a_problem(tmp_path: Path) -> None:
    whole = _database(tmp_path, "edit").read_bytes()
    cut = tmp_path / "cut.db"
    cut.write_bytes(whole[: len(whole) // 3])
    assert _problem(cut) in ("database disk image is malformed", "file is not a database")
    text = tmp_path / "text.db"
    text.write_text("not a database\n" * 100)
    assert _problem(text) == "file is not a database"
    fifo = tmp_path / "fifo.db"
    os.mkfifo(fifo)
    assert _problem(fifo) == "not a regular file: not read"


def test_a_schema_gemwire_does_not_know_is_a_problem(tmp_path: Path) -> None:
    database = _database(tmp_path, "answer")
    with closing(sqlite3.connect(database)) as connection:
        connection.execute("ALTER TABLE session RENAME COLUMN directory TO folder")
    assert _problem(database) == "a schema gemwire does not know (no column directory in session)"
    other = _database(tmp_path / "other", "answer")
    with closing(sqlite3.connect(other)) as connection:  # what a session's search stamp reads
        connection.execute("ALTER TABLE part DROP COLUMN time_updated")
    assert _problem(other) == "a schema gemwire does not know (no column time_updated in part)"
    assert OpenCodeHome(tmp_path / "no-such-home").sessions() == []


def test_a_row_that_is_not_one_is_a_problem_on_its_row(tmp_path: Path) -> None:
    database = _database(tmp_path, "answer")
    with closing(sqlite3.connect(database)) as connection:
        reasoning = """UPDATE part SET data = 'not json' WHERE data LIKE '%"type":"reasoning"%'"""
        connection.execute(reasoning)
        connection.commit()
    conversation = load_opencode_session(database)
    assert [(p.line, p.message.split(":")[0]) for p in conversation.problems] == [(5, "not a part")]
    types = [e.type for e in conversation.events()]
    assert types == ["session_started", "notice", "user_message", "message_delta", "usage"]


def test_a_row_that_is_not_utf_8_is_a_problem_on_its_row_only(tmp_path: Path) -> None:
    """Every session is still listed and loaded; the bad bytes are U+FFFD, as Node reads them."""
    workspace = tmp_path / "w"
    home = _home(tmp_path, workspace)
    before = home.sessions(workspace)
    answer = before[0].id
    with closing(sqlite3.connect(home.database)) as connection:
        # A prompt's text and a session's title, each with bytes that are not UTF-8.
        [(part, data)] = connection.execute(
            "SELECT p.id, p.data FROM part p JOIN message m ON m.id = p.message_id"
            " WHERE p.session_id = ? AND m.data LIKE '%\"user\"%'",
            (answer,),
        ).fetchall()
        cut = data.encode().replace(b'"go"', b'"go \xff"')
        connection.execute("UPDATE part SET data = CAST(? AS TEXT) WHERE id = ?", (cut, part))
        connection.execute(
            "UPDATE session SET title = CAST(? AS TEXT) WHERE id = ?", (b"t\xfe", before[1].id)
        )
        connection.commit()
    after = home.sessions(workspace)
    assert [i.id for i in after] == [i.id for i in before]
    assert (after[0].first_prompt, after[1].summary) == ("go \ufffd", "t\ufffd")
    conversation = load_opencode_session(after[0].path)
    assert [(p.line, p.message) for p in conversation.problems] == [
        (2, "replaced 1 invalid UTF-8 byte(s) with U+FFFD")
    ]
    [prompt] = [e for e in conversation.events() if e.type == "user_message"]
    assert prompt.text == "go \ufffd"  # type: ignore[union-attr]
    assert load_opencode_session(after[1].path).problems == []
    assert usage(home).total.requests == usage(OpenCodeHome(tmp_path)).total.requests > 0
    [hit] = search("go \ufffd", home)
    assert hit.id == answer


def test_reading_while_opencode_writes(tmp_path: Path) -> None:
    """WAL: a reader sees the last commit, and is not held up by a write in progress."""
    database = tmp_path / ".local" / "share" / "opencode" / "opencode.db"
    build((RECORDINGS / "answer.sql").read_text(), database)
    home = OpenCodeHome(tmp_path)
    [before] = home.all_sessions()
    with closing(sqlite3.connect(database, isolation_level=None)) as writer:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("UPDATE session SET title = 'renamed'")
        assert home.all_sessions() == [before]
        assert load_opencode_session(database).problems == []
        writer.execute("COMMIT")
    [after] = home.all_sessions()
    assert (before.summary != "renamed", after.summary) == (True, "renamed")


def _home(tmp_path: Path, workspace: Path) -> OpenCodeHome:
    sqls = [(RECORDINGS / f"{case}.sql").read_text() for case in CASES]
    database = tmp_path / ".local" / "share" / "opencode" / "opencode.db"
    merged([sql.replace("__WORKSPACE__", str(workspace)) for sql in sqls], database)
    return OpenCodeHome(tmp_path)


def test_the_home_lists_finds_and_counts(tmp_path: Path) -> None:
    workspace = tmp_path / "my_work"
    home = _home(tmp_path, workspace)
    listed = home.sessions(workspace)
    assert [i.index for i in listed] == list(range(1, len(CASES) + 1))
    assert {(i.agent, i.project, i.first_prompt, i.format) for i in listed} == {
        ("opencode", str(workspace), "go", "sqlite")
    }
    assert home.find("latest", workspace) == listed[-1]
    assert home.find(listed[0].id or "", workspace) == listed[0]
    assert home.find(listed[2].path) == listed[2]
    assert home.all_sessions() == listed
    assert home.sessions(tmp_path / "elsewhere") == []
    report = usage(home, by="model")
    # One assistant message a model response, each 100 in + 10 out.
    responses = {"answer": 1, "cancel": 0, "edit": 3, "multi_turn": 3, "shell": 2}
    responses |= {"shell_denied": 1}
    responses |= {"tool_error": 3, "write": 2, "write_denied": 1}
    assert [(r.key, r.requests) for r in report.rows] == [
        ("gemwire-scripted", sum(responses.values()))
    ]
    assert report.total.total_tokens == 110 * sum(responses.values())
    assert usage(home, project=str(tmp_path / "elsewhere")).total.requests == 0


def test_opencode_s_env_vars_find_its_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENCODE_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert OpenCodeHome().database == tmp_path / "data" / "opencode" / "opencode.db"
    monkeypatch.setenv("OPENCODE_DB", "other.db")
    assert OpenCodeHome().database == tmp_path / "data" / "opencode" / "other.db"
    monkeypatch.setenv("OPENCODE_DB", str(tmp_path / "elsewhere.db"))
    assert OpenCodeHome().database == tmp_path / "elsewhere.db"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.delenv("OPENCODE_DB")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert OpenCodeHome().database == tmp_path / ".local" / "share" / "opencode" / "opencode.db"


def test_the_cli_lists_shows_and_exports_opencode_sessions(tmp_path: Path) -> None:
    workspace = tmp_path / "w"
    _home(tmp_path, workspace)
    runner = CliRunner(env={"XDG_DATA_HOME": str(tmp_path / ".local" / "share")})
    where = ["--agent", "opencode", "--project", str(workspace)]
    listed = runner.invoke(main, ["sessions", "list", *where, "--json"])
    assert listed.exit_code == 0, listed.stderr
    assert len(listed.stdout.splitlines()) == len(CASES)
    shown = runner.invoke(main, ["sessions", "show", "3", *where, "--json"])
    assert shown.exit_code == 0, shown.stderr
    first = json.loads(shown.stdout.splitlines()[0])
    assert (first["agent"], first["type"]) == ("opencode", "session_started")
    html = runner.invoke(main, ["sessions", "export", "1", *where, "--format", "html"])
    assert html.exit_code == 0, html.stderr
    assert '<div class="role">OpenCode</div>' in html.stdout
    markdown = runner.invoke(main, ["sessions", "export", "3", *where, "--format", "markdown"])
    assert markdown.exit_code == 0, markdown.stderr
    assert f"- created `{workspace / 'hello.txt'}`" in markdown.stdout  # the write case's
    every = runner.invoke(main, ["usage", "--agent", "all", "--json"])
    assert every.exit_code == 0, every.stderr
    assert "opencode" in json.loads(every.stdout)["agents"]


_VALUES = st.text(max_size=60) | st.binary(max_size=60) | st.sampled_from(CUT_TEXT)
_ROW_VALUES = st.tuples(st.sampled_from(["part", "message"]), _VALUES, st.booleans())


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(_ROW_VALUES, min_size=1, max_size=4))
def test_any_row_data_loads_lists_and_maps_without_raising(
    edits: list[tuple[str, str | bytes, bool]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Any value as a row's ``data``: text (valid UTF-8 or not: bytes cast to TEXT) or a
    BLOB; each is a problem on its row at most (a repair and what is left wrong of it)."""
    home = tmp_path_factory.mktemp("hostile")
    database = _database(home / ".local" / "share" / "opencode", "edit")
    with closing(sqlite3.connect(database)) as connection:
        for n, (table, value, as_text) in enumerate(edits):
            ids = [row[0] for row in connection.execute(f"SELECT id FROM {table} ORDER BY id")]
            cast = "CAST(? AS TEXT)" if as_text and isinstance(value, bytes) else "?"
            update = f"UPDATE {table} SET data = {cast} WHERE id = ?"
            connection.execute(update, (value, ids[n % len(ids)]))
        connection.commit()
    conversation = load_opencode_session(database)
    assert conversation.session_id is not None  # the database itself still reads
    assert len({p.line for p in conversation.problems}) <= len(edits)
    for event in conversation.events():
        encode_event(terminal_safe_event(event))
    source = OpenCodeHome(home)
    assert len(source.all_sessions()) <= 1
    usage(source)
    list(search("line", source))


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_row_s_text_cut_inside_a_character_loses_nothing(
    data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The fuzzing harness's cut texts (tests/kit/hostile.py) in the rows' JSON, stored as TEXT:
    every row is still read, and each cut one says it was repaired."""
    database = _database(tmp_path_factory.mktemp("cut"), "edit")
    with closing(sqlite3.connect(database)) as connection:
        rows = connection.execute("SELECT id, data FROM part ORDER BY id").fetchall()
        cut = data.draw(st.sets(st.sampled_from(rows), min_size=1, max_size=3))
        for part_id, text in cut:
            hostile = data.draw(cut_text(text.encode()))
            connection.execute(
                "UPDATE part SET data = CAST(? AS TEXT) WHERE id = ?", (hostile, part_id)
            )
        connection.commit()
    conversation = load_opencode_session(database)
    whole = load_opencode_session(_database(tmp_path_factory.mktemp("whole"), "edit"))
    assert len(conversation.records) == len(whole.records)
    assert 1 <= len({p.line for p in conversation.problems}) <= len(cut)
    assert all(p.message.startswith("replaced ") for p in conversation.problems)


def test_a_recorded_task_subagent_follows_the_call_that_started_it(tmp_path: Path) -> None:
    """Recorded by tests/e2e/agents/test_opencode_subagent_saved.py: OpenCode's own ``task``
    call and the subagent session it started (``parent_id``, ``metadata.sessionId``)."""
    database = build(
        (RECORDINGS / "subagent.sql").read_text(),
        tmp_path / ".local" / "share" / "opencode" / "opencode.db",
    )
    [info] = OpenCodeHome(tmp_path).all_sessions()
    [sub] = info.subagents
    assert (sub.kind, sub.parent_id, sub.first_prompt) == ("subagent", info.id, "say sub done")
    conversation = load_opencode_session(database)
    assert conversation.problems == []
    events = [msgspec.to_builtins(e) for e in nested_opencode_events(conversation)]
    golden = (RECORDINGS / "subagent.events.jsonl").read_text().splitlines()
    assert events == [json.loads(line) for line in golden]
    runner = CliRunner(env={"XDG_DATA_HOME": str(tmp_path / ".local" / "share")})
    shown = runner.invoke(main, ["sessions", "show", info.path, "--agent", "opencode"])
    assert shown.exit_code == 0, shown.stderr
    [call] = [e["call_id"] for e in events if e["type"] == "tool_call_started"]
    assert f"# subagent {sub.id} (call {call})" in shown.stdout
    assert f"# subagent {sub.id}: " not in shown.stdout  # not again, as one no call names


def _with_subagent(tmp_path: Path, *, linked: bool) -> tuple[OpenCodeHome, Path, str, str]:
    """The recordings' home, its second session made a subagent of the first (answer's),
    started by a ``task`` call of the first when ``linked``."""
    workspace = tmp_path / "w"
    home = _home(tmp_path, workspace)
    first, second, *_ = home.sessions(workspace)
    assert first.id is not None
    assert second.id is not None
    task = {
        "type": "tool",
        "tool": "task",
        "callID": "call_task",
        "state": {
            "status": "completed",
            "input": {"description": "look", "prompt": "look", "subagent_type": "general"},
            "output": "looked",
            "title": "look",
            "metadata": {"sessionId": second.id} if linked else {},
        },
    }
    with closing(sqlite3.connect(home.database)) as connection:
        connection.execute("UPDATE session SET parent_id = ? WHERE id = ?", (first.id, second.id))
        [message] = connection.execute(
            "SELECT id FROM message WHERE session_id = ? AND data LIKE '%assistant%'", (first.id,)
        ).fetchall()
        connection.execute(
            "INSERT INTO part VALUES ('prt_zzz', ?, ?, 0, 0, ?)",
            (message[0], first.id, json.dumps(task)),
        )
        connection.commit()
    return home, workspace, first.id, second.id


@pytest.mark.parametrize("linked", [True, False])
def test_show_puts_a_subagent_after_the_call_that_started_it(tmp_path: Path, linked: bool) -> None:
    home, workspace, first, second = _with_subagent(tmp_path, linked=linked)
    [parent] = [i for i in home.sessions(workspace) if i.id == first]
    assert [(s.id, s.kind, s.parent_id) for s in parent.subagents] == [(second, "subagent", first)]
    runner = CliRunner(env={"XDG_DATA_HOME": str(tmp_path / ".local" / "share")})
    where = ["--agent", "opencode", "--project", str(workspace)]
    shown = runner.invoke(main, ["sessions", "show", first, *where, "--json"])
    assert shown.exit_code == 0, shown.stderr
    events = [json.loads(line) for line in shown.stdout.splitlines()]
    started = [
        (e["session_id"], e.get("parent_call_id")) for e in events if e["type"] == "session_started"
    ]
    assert started == [(first, None), (second, "call_task" if linked else None)]
    if linked:  # right after the call started, before it finished
        types = [e["type"] for e in events]
        at = types.index("tool_call_started")
        assert (types[at + 1], events[at + 1]["session_id"]) == ("session_started", second)
        plain = runner.invoke(main, ["sessions", "show", first, *where])
        assert f"# subagent {second} (call call_task)" in plain.stdout


def test_a_transcript_nests_a_subagent_in_its_call(tmp_path: Path) -> None:
    home, _, first, second = _with_subagent(tmp_path, linked=True)
    conversation = load_opencode_session(f"{home.database}#{first}")
    markdown = to_markdown(conversation)
    assert f"> **Subagent session {second}**" in markdown
