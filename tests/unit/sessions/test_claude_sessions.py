"""Claude Code's saved sessions beyond what test_jsonl_sources.py checks of every agent: what
only Claude Code's records show (a refusal, sidechains), its home's env var and
`load_session` telling the formats apart."""

from __future__ import annotations

from pathlib import Path

import pytest
from kit.corpus import FIXTURES

from gemwire.events import FileChanged, Notice, ToolCallFinished, ToolCallStarted
from gemwire.sessions import (
    ClaudeConversation,
    ClaudeHome,
    Conversation,
    load_session,
    sources,
)
from gemwire.sessions.claude import load_claude_session

RECORDINGS = FIXTURES / "claude" / "0.16.2"


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
        "CodexHome",
        "QwenHome",
        "OpenCodeHome",
        "AntigravityHome",
    ]


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
        "2 subagent (sidechain) records left out: gemwire reads Claude Code's subagents "
        "from their own files"
    )
