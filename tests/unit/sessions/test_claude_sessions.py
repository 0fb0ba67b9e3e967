"""Claude Code's saved sessions: the recordings' golden events, the wire types held strictly
to them, hostile files, the home (listing, lookups, usage) and `load_session` telling the
formats apart."""

from __future__ import annotations

import json
import os
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner
from corpus import FIXTURES
from hypothesis import given, strategies as st

from gemwire.cli import main
from gemwire.events import FileChanged, Notice, SessionStarted, ToolCallFinished, ToolCallStarted
from gemwire.protocol._strict import unknown_fields
from gemwire.sessions import (
    ClaudeConversation,
    ClaudeHome,
    Conversation,
    load_session,
    sources,
    usage,
)
from gemwire.sessions.claude import load_claude_session, project_slug
from gemwire.wire.claude_session import Record

RECORDINGS = FIXTURES / "claude" / "0.16.2"
CASES = sorted(
    p.name.removesuffix(".jsonl") for p in RECORDINGS.glob("*.jsonl") if "." not in p.stem
)


def test_every_case_is_recorded() -> None:
    assert CASES == [
        "answer",
        "cancel",
        "edit",
        "shell",
        "shell_denied",
        "tool_error",
        "write",
        "write_denied",
    ]


@pytest.mark.parametrize("case", CASES)
def test_golden_events(case: str) -> None:
    conversation = load_session(RECORDINGS / f"{case}.jsonl")
    assert isinstance(conversation, ClaudeConversation)
    assert conversation.problems == []
    events = [msgspec.to_builtins(e) for e in conversation.events()]
    golden = [
        json.loads(line) for line in (RECORDINGS / f"{case}.events.jsonl").read_text().splitlines()
    ]
    assert events == golden


@pytest.mark.parametrize("case", CASES)
def test_the_wire_types_declare_every_recorded_field(case: str) -> None:
    for line in (RECORDINGS / f"{case}.jsonl").read_bytes().splitlines():
        assert unknown_fields(json.loads(line), Record) == []


def test_tool_kinds_results_and_changes_of_an_edit() -> None:
    events = list(load_claude_session(RECORDINGS / "edit.jsonl").events())
    started = [(e.name, e.kind) for e in events if isinstance(e, ToolCallStarted)]
    assert started == [("mcp__acp__Read", "read"), ("mcp__acp__Edit", "edit")]
    changed = [(e.path, e.change, e.derived) for e in events if isinstance(e, FileChanged)]
    assert changed == [("__WORKSPACE__/a.txt", "modified", True)]


def test_a_denied_call_fails_with_the_refusal() -> None:
    events = list(load_claude_session(RECORDINGS / "shell_denied.jsonl").events())
    [finished] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert (finished.status, finished.output) == ("failed", "User refused permission to run tool")
    assert [e.type for e in events if e.type == "file_changed"] == []


def _session(tmp_path: Path, lines: list[bytes]) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines))
    return path


RECORD = b'{"type":"user","sessionId":"s1","cwd":"/w","message":{"role":"user","content":"hi"}}'


def test_broken_lines_are_problems_and_unknown_records_are_kept(tmp_path: Path) -> None:
    path = _session(
        tmp_path,
        [
            RECORD,
            b"not json",
            b'{"type":"user","message":{"role":"user","content":7}}',
            b'{"type":"file-history-snapshot","snapshot":{}}',
            b'{"type":"assistant","sessionId":"s1","message":{"role":"assistant","content":[',
        ],
    )
    conversation = load_claude_session(path)
    assert [p.line for p in conversation.problems] == [2, 3, 5]
    types = [e.type for e in conversation.events()]
    assert types == ["session_started", "notice", "notice", "notice", "user_message", "unknown"]


def test_a_file_that_is_not_a_session_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert [p.message for p in load_claude_session(empty).problems] == ["empty file"]
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    [problem] = load_claude_session(fifo).problems
    assert problem.message == "not a regular file (a FIFO): not read"


@given(st.lists(st.binary(max_size=80), max_size=6))
def test_any_bytes_load_and_map_without_raising(chunks: list[bytes]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = _session(Path(folder), [RECORD, *chunks])
        events = list(load_claude_session(path).events())
    assert isinstance(events[0], SessionStarted)
    assert all(not isinstance(e, Notice) or e.message for e in events)


def materialize(home: Path, workspace: Path) -> list[Path]:
    """Every recording as a session of ``workspace`` in the Claude home ``home``."""
    folder = home / ".claude" / "projects" / project_slug(str(workspace))
    folder.mkdir(parents=True)
    made = []
    for case in CASES:
        text = (RECORDINGS / f"{case}.jsonl").read_text().replace("__WORKSPACE__", str(workspace))
        session_id = json.loads(text.splitlines()[0])["sessionId"]
        made.append(folder / f"{session_id}.jsonl")
        made[-1].write_text(text)
    return made


def test_the_home_lists_finds_and_counts(tmp_path: Path) -> None:
    workspace = tmp_path / "my_work"
    files = materialize(tmp_path / "home", workspace)
    home = ClaudeHome(tmp_path / "home")
    listed = home.sessions(workspace)
    assert sorted(i.path for i in listed) == sorted(map(str, files))
    assert [i.index for i in listed] == list(range(1, len(files) + 1))
    assert {(i.agent, i.project, i.first_prompt) for i in listed} == {
        ("claude", str(workspace), "go")
    }
    assert home.find("latest", workspace) == listed[-1]
    assert home.find(listed[0].id or "", workspace) == listed[0]
    assert home.find(files[0]).path == str(files[0])
    assert home.all_sessions() == listed
    report = usage(home, by="model")
    # One response per model turn (its records share one id), each 100 in + 1 out.
    turns = {"answer": 1, "cancel": 0, "edit": 3, "shell": 2, "shell_denied": 1}
    turns |= {"tool_error": 3, "write": 2, "write_denied": 1}
    assert [(r.key, r.requests) for r in report.rows] == [
        ("claude-sonnet-4-5-20250929", sum(turns.values()))
    ]
    assert report.total.total_tokens == 101 * sum(turns.values())
    assert report.agents == ["claude"]


def test_claude_config_dir_is_claude_s_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "conf"))
    assert ClaudeHome().projects_dir == tmp_path / "conf" / "projects"
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert ClaudeHome().projects_dir == tmp_path / ".claude" / "projects"


def test_load_session_tells_the_formats_apart(tmp_path: Path) -> None:
    assert isinstance(load_session(RECORDINGS / "answer.jsonl"), ClaudeConversation)
    gemini = next(
        (FIXTURES / "gemini" / "0.61.0").glob(
            "*/stream-json/gemini-home/tmp/*/chats/session-*.jsonl"
        )
    )
    assert isinstance(load_session(gemini), Conversation)
    assert [type(s).__name__ for s in sources("all", tmp_path)] == [
        "GeminiHome",
        "ClaudeHome",
        "QwenHome",
    ]


def test_the_cli_lists_shows_and_exports_claude_sessions(tmp_path: Path) -> None:
    workspace = tmp_path / "w"
    materialize(tmp_path / "home", workspace)
    env = {
        "CLAUDE_CONFIG_DIR": str(tmp_path / "home" / ".claude"),
        "GEMINI_CLI_HOME": str(tmp_path),
    }
    runner = CliRunner(env=env)
    where = ["--agent", "claude", "--project", str(workspace)]
    listed = runner.invoke(main, ["sessions", "list", *where, "--json"])
    assert listed.exit_code == 0
    assert len(listed.stdout.splitlines()) == len(CASES)
    shown = runner.invoke(main, ["sessions", "show", "1", *where, "--json"])
    assert shown.exit_code == 0
    assert json.loads(shown.stdout.splitlines()[0])["agent"] == "claude"
    html = runner.invoke(main, ["sessions", "export", "1", *where, "--format", "html"])
    assert html.exit_code == 2
    assert "--format html of a Claude Code session is not supported yet" in html.stderr


def test_subagent_records_are_left_out_with_one_notice(tmp_path: Path) -> None:
    sidechain = (
        b'{"type":"assistant","isSidechain":true,"sessionId":"s1",'
        b'"message":{"role":"assistant","content":"sub"}}'
    )
    path = _session(tmp_path, [RECORD, sidechain, sidechain])
    events = list(load_claude_session(path).events())
    assert [e.type for e in events] == ["session_started", "user_message", "notice"]
    assert isinstance(events[-1], Notice)
    assert events[-1].message == (
        "2 subagent (sidechain) records left out: gemwire does not link Claude Code's "
        "subagents to their Task call yet"
    )
