"""Qwen Code's saved sessions beyond what test_jsonl_sources.py checks of every agent: what
only Qwen Code's records show (thoughts, its own user records, error types), its home's env
vars and `load_session` telling it from Claude Code's."""

from __future__ import annotations

from pathlib import Path

import pytest
from kit.corpus import FIXTURES

from gemwire.events import (
    FileChanged,
    MessageDelta,
    Notice,
    ThoughtDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from gemwire.sessions import QwenConversation, QwenHome, load_session
from gemwire.sessions.qwen import load_qwen_session, read_qwen_info

RECORDINGS = FIXTURES / "qwen" / "0.24.4"


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
