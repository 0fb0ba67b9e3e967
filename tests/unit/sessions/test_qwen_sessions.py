"""Qwen Code's saved sessions: the recordings' golden events, the wire types held strictly
to them, hostile files, the home (its env vars, listing, lookups, usage) and `load_session`
telling the formats apart."""

from __future__ import annotations

import json
import os
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner
from corpus import FIXTURES
from hostile import mutated, within
from hypothesis import HealthCheck, given, settings, strategies as st

from gemwire.cli import main
from gemwire.cli.safe_text import terminal_safe_event
from gemwire.events import (
    FileChanged,
    MessageDelta,
    Notice,
    SessionStarted,
    ThoughtDelta,
    ToolCallFinished,
    ToolCallStarted,
    encode_event,
)
from gemwire.protocol._strict import unknown_fields
from gemwire.sessions import QwenConversation, QwenHome, load_session, usage
from gemwire.sessions.qwen import load_qwen_session, project_slug, read_qwen_info
from gemwire.wire.qwen_session import Record

RECORDINGS = FIXTURES / "qwen" / "0.24.4"
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
    assert isinstance(conversation, QwenConversation)
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


def test_thoughts_answer_and_usage_of_a_plain_answer() -> None:
    events = list(load_qwen_session(RECORDINGS / "answer.jsonl").events())
    assert [e.text for e in events if isinstance(e, ThoughtDelta)] == ["Let me think."]
    assert [e.text for e in events if isinstance(e, MessageDelta)] == ["Hello there."]
    assert [e.type for e in events] == [
        "session_started",
        "user_message",
        "thought_delta",
        "message_delta",
        "usage",
    ]


def test_tool_kinds_results_and_changes_of_an_edit() -> None:
    events = list(load_qwen_session(RECORDINGS / "edit.jsonl").events())
    started = [(e.name, e.kind) for e in events if isinstance(e, ToolCallStarted)]
    assert started == [("read_file", "read"), ("edit", "edit")]
    changed = [(e.path, e.change, e.derived) for e in events if isinstance(e, FileChanged)]
    assert changed == [("__WORKSPACE__/a.txt", "modified", False)]


def test_a_shell_command_is_executed() -> None:
    events = list(load_qwen_session(RECORDINGS / "shell.jsonl").events())
    [started] = [e for e in events if isinstance(e, ToolCallStarted)]
    assert (started.name, started.kind, started.title) == (
        "run_shell_command",
        "execute",
        "touch made.txt",
    )
    [finished] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished.status == "completed"


def test_a_denied_call_fails_with_the_refusal() -> None:
    events = list(load_qwen_session(RECORDINGS / "shell_denied.jsonl").events())
    [finished] = [e for e in events if isinstance(e, ToolCallFinished)]
    refusal = 'Tool "run_shell_command" was canceled by the user.'
    assert (finished.status, finished.output) == ("failed", refusal)
    assert finished.error is not None
    assert (finished.error.type, finished.error.message) == ("cancelled", refusal)
    assert [e for e in events if isinstance(e, FileChanged)] == []


def test_a_failed_tool_keeps_its_error_type() -> None:
    events = list(load_qwen_session(RECORDINGS / "tool_error.jsonl").events())
    failed = [e for e in events if isinstance(e, ToolCallFinished) and e.status == "failed"]
    assert [(e.call_id, e.error and e.error.type) for e in failed] == [
        ("call_gemwire_1_0", "edit_no_occurrence_found")
    ]
    assert [e for e in events if isinstance(e, FileChanged)] == []


def _session(tmp_path: Path, lines: list[bytes]) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines))
    return path


RECORD = (
    b'{"uuid":"u1","sessionId":"s1","type":"user","cwd":"/w",'
    b'"message":{"role":"user","parts":[{"text":"hi"}]}}'
)


def test_broken_lines_are_problems_and_unknown_records_are_kept(tmp_path: Path) -> None:
    path = _session(
        tmp_path,
        [
            RECORD,
            b"not json",
            b'{"type":"user","message":{"role":"user","parts":7}}',
            b'{"type":"system","subtype":"ui_telemetry","systemPayload":{}}',
            b'{"type":"compaction","sessionId":"s1"}',
            b'{"uuid":"u2","type":"assistant","message":{"role":"model","parts":[',
        ],
    )
    conversation = load_qwen_session(path)
    assert [p.line for p in conversation.problems] == [2, 3, 6]
    types = [e.type for e in conversation.events()]
    assert types == ["session_started", "notice", "notice", "notice", "user_message", "unknown"]


def test_a_result_for_no_call_and_a_call_with_no_result(tmp_path: Path) -> None:
    call = (
        b'{"type":"assistant","message":{"role":"model","parts":'
        b'[{"functionCall":{"id":"c1","name":"glob","args":{"pattern":"*"}}}]}}'
    )
    stray = (
        b'{"type":"tool_result","message":{"role":"user","parts":'
        b'[{"functionResponse":{"id":"c9","name":"glob","response":{"output":"x"}}}]}}'
    )
    events = list(load_qwen_session(_session(tmp_path, [RECORD, call, stray])).events())
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert notices[0] == "a result for unknown call 'c9'"
    [started] = [e for e in events if isinstance(e, ToolCallStarted)]
    assert (started.name, started.kind) == ("glob", "search")
    [finished] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert (finished.call_id, finished.status) == ("c1", "cancelled")


def test_qwen_s_own_user_records_are_notices_not_prompts(tmp_path: Path) -> None:
    cron = (
        b'{"uuid":"u0","sessionId":"s1","type":"user","subtype":"cron","provenance":"system",'
        b'"message":{"role":"user","parts":[{"text":"check the build"}]}}'
    )
    path = _session(tmp_path, [cron, RECORD])
    events = list(load_qwen_session(path).events())
    assert [(e.type, getattr(e, "text", None) or getattr(e, "message", None)) for e in events] == [
        ("session_started", None),
        ("notice", "cron: check the build"),
        ("user_message", "hi"),
    ]
    assert read_qwen_info(path).first_prompt == "hi"


def test_a_file_that_is_not_a_session_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert [p.message for p in load_qwen_session(empty).problems] == ["empty file"]
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    [problem] = load_qwen_session(fifo).problems
    assert problem.message == "not a regular file (a FIFO): not read"


@given(st.lists(st.binary(max_size=80), max_size=6))
def test_any_bytes_load_and_map_without_raising(chunks: list[bytes]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = _session(Path(folder), [RECORD, *chunks])
        events = list(load_qwen_session(path).events())
    assert isinstance(events[0], SessionStarted)
    assert all(not isinstance(e, Notice) or e.message for e in events)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.sampled_from(CASES).flatmap(lambda c: mutated((RECORDINGS / f"{c}.jsonl").read_bytes())))
def test_hostile_recordings_load_list_and_encode(data: bytes) -> None:
    """The fuzzing harness used for Gemini's files (tests/hostile.py) on Qwen's recordings."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder, within(30):
        path = Path(folder) / "s.jsonl"
        path.write_bytes(data)
        events = list(load_qwen_session(path).events())
        assert isinstance(events[0], SessionStarted)
        for event in events:
            encode_event(terminal_safe_event(event))
        assert read_qwen_info(path).agent == "qwen"


def materialize(home: Path, workspace: Path) -> list[Path]:
    """Every recording as a session of ``workspace`` in the Qwen home ``home``."""
    folder = home / ".qwen" / "projects" / project_slug(str(workspace)) / "chats"
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
    home = QwenHome(tmp_path / "home")
    listed = home.sessions(workspace)
    assert sorted(i.path for i in listed) == sorted(map(str, files))
    assert [i.index for i in listed] == list(range(1, len(files) + 1))
    assert {(i.agent, i.project, i.first_prompt) for i in listed} == {
        ("qwen", str(workspace), "go")
    }
    assert home.find("latest", workspace) == listed[-1]
    assert home.find(listed[0].id or "", workspace) == listed[0]
    assert home.find(files[0]).path == str(files[0])
    assert home.all_sessions() == listed
    report = usage(home, by="model")
    # One assistant record per model response, each 100 in + 10 out.
    turns = {"answer": 1, "cancel": 0, "edit": 3, "shell": 2, "shell_denied": 1}
    turns |= {"tool_error": 3, "write": 2, "write_denied": 1}
    assert [(r.key, r.requests) for r in report.rows] == [("gemwire-scripted", sum(turns.values()))]
    assert report.total.total_tokens == 110 * sum(turns.values())
    assert report.agents == ["qwen"]


def test_qwen_s_env_vars_find_its_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("QWEN_RUNTIME_DIR", raising=False)
    monkeypatch.delenv("QWEN_HOME", raising=False)
    assert QwenHome().projects_dir == tmp_path / ".qwen" / "projects"
    monkeypatch.setenv("QWEN_HOME", "~/conf")
    assert QwenHome().projects_dir == tmp_path / "conf" / "projects"
    monkeypatch.setenv("QWEN_RUNTIME_DIR", str(tmp_path / "run"))
    assert QwenHome().projects_dir == tmp_path / "run" / "projects"


def test_load_session_tells_qwen_from_claude() -> None:
    assert isinstance(load_session(RECORDINGS / "answer.jsonl"), QwenConversation)
    claude = FIXTURES / "claude" / "0.16.2" / "answer.jsonl"
    assert not isinstance(load_session(claude), QwenConversation)


def test_the_cli_lists_shows_and_exports_qwen_sessions(tmp_path: Path) -> None:
    workspace = tmp_path / "w"
    materialize(tmp_path / "home", workspace)
    env = {
        "HOME": str(tmp_path),
        "QWEN_HOME": str(tmp_path / "home" / ".qwen"),
        "QWEN_RUNTIME_DIR": "",
        "CLAUDE_CONFIG_DIR": str(tmp_path / "no-claude"),
        "GEMINI_CLI_HOME": str(tmp_path),
    }
    runner = CliRunner(env=env)
    where = ["--agent", "qwen", "--project", str(workspace)]
    listed = runner.invoke(main, ["sessions", "list", *where, "--json"])
    assert listed.exit_code == 0
    assert len(listed.stdout.splitlines()) == len(CASES)
    shown = runner.invoke(main, ["sessions", "show", "1", *where, "--json"])
    assert shown.exit_code == 0
    assert json.loads(shown.stdout.splitlines()[0])["agent"] == "qwen"
    html = runner.invoke(main, ["sessions", "export", "1", *where, "--format", "html"])
    assert html.exit_code == 2
    assert "--format html of a Qwen Code session is not supported yet" in html.stderr
    every = runner.invoke(main, ["usage", "--agent", "all", "--json"])
    assert every.exit_code == 0, every.stderr
    assert "qwen" in json.loads(every.stdout)["agents"]
