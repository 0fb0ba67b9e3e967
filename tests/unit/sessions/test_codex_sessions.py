"""Codex's saved sessions beyond what test_jsonl_sources.py checks of every agent: each
payload held strictly to its wire type, what only Codex's records show (tool outcomes read
from their output, a patch's files, usage from cumulative counts), its day folders, its
home's env var and `load_session` telling its rollouts from the others."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kit.corpus import FIXTURES

from gemwire.events import (
    FileChanged,
    Notice,
    ToolCallFinished,
    ToolCallStarted,
    Unknown,
    UsageReported,
)
from gemwire.protocol._strict import unknown_fields
from gemwire.sessions import CodexConversation, CodexHome, load_session, usage
from gemwire.sessions.codex import load_codex_session
from gemwire.wire.codex_session import EventMsg, ResponseItem, SessionMeta, TurnContext

RECORDINGS = FIXTURES / "codex" / "0.16.0"
PAYLOADS = {
    "session_meta": SessionMeta,
    "turn_context": TurnContext,
    "response_item": ResponseItem,
    "event_msg": EventMsg,
}


@pytest.mark.parametrize("case", ["answer", "cancel", "edit", "shell", "shell_denied"])
def test_every_recorded_payload_is_declared(case: str) -> None:
    for line in (RECORDINGS / f"{case}.jsonl").read_bytes().splitlines():
        record = json.loads(line)
        assert unknown_fields(record["payload"], PAYLOADS[record["type"]]) == []


def test_tool_kinds_results_and_changes_of_an_edit() -> None:
    events = list(load_codex_session(RECORDINGS / "edit.jsonl").events())
    started = [(e.name, e.kind, e.title) for e in events if isinstance(e, ToolCallStarted)]
    assert started == [
        ("exec_command", "execute", "cat a.txt"),
        ("apply_patch", "edit", "apply_patch __WORKSPACE__/a.txt"),
    ]
    changed = [(e.path, e.change, e.derived) for e in events if isinstance(e, FileChanged)]
    assert changed == [("__WORKSPACE__/a.txt", "modified", False)]


def test_a_denied_call_is_cancelled_and_a_patch_that_does_not_apply_fails() -> None:
    denied = list(load_codex_session(RECORDINGS / "write_denied.jsonl").events())
    [finished] = [e for e in denied if isinstance(e, ToolCallFinished)]
    assert (finished.status, finished.output) == ("cancelled", "aborted by user after 0.1s")
    assert [e for e in denied if isinstance(e, FileChanged)] == []
    failed = list(load_codex_session(RECORDINGS / "tool_error.jsonl").events())
    statuses = [(e.call_id, e.status) for e in failed if isinstance(e, ToolCallFinished)]
    assert statuses == [("call_gemwire_0_0", "completed"), ("call_gemwire_1_0", "failed")]


def _session(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "rollout-x.jsonl"
    meta = {"timestamp": "t0", "type": "session_meta", "payload": {"id": "s1", "cwd": "/w"}}
    path.write_text("\n".join([json.dumps(meta), *lines]) + "\n")
    return path


def _event(payload: dict[str, object]) -> str:
    return json.dumps({"timestamp": "t", "type": "event_msg", "payload": payload})


def _item(payload: dict[str, object]) -> str:
    return json.dumps({"timestamp": "t", "type": "response_item", "payload": payload})


def _count(total: int) -> str:
    usage = {"input_tokens": total - 10, "output_tokens": 10, "total_tokens": total}
    return _event({"type": "token_count", "info": {"total_token_usage": usage}})


def test_usage_is_the_difference_of_the_cumulative_counts(tmp_path: Path) -> None:
    context = {"timestamp": "t", "type": "turn_context", "payload": {"model": "gpt-5.4-mini"}}
    path = _session(tmp_path, [json.dumps(context), _count(110), _count(110), _count(300)])
    events = list(load_codex_session(path).events())
    totals = [e.usage.total_tokens for e in events if isinstance(e, UsageReported)]
    assert totals == [110, 190]  # the repeated count adds nothing
    [first, _] = [e.usage for e in events if isinstance(e, UsageReported)]
    assert list(first.by_model) == ["gpt-5.4-mini"]


def test_a_command_that_exits_non_zero_fails(tmp_path: Path) -> None:
    call = {"type": "function_call", "name": "exec_command", "arguments": '{"cmd":"false"}'}
    output = "Chunk ID: 1\nProcess exited with code 1\nOutput:\n"
    path = _session(
        tmp_path,
        [
            _item({**call, "call_id": "c1"}),
            _item({"type": "function_call_output", "call_id": "c1", "output": output}),
        ],
    )
    [finished] = [e for e in load_codex_session(path).events() if isinstance(e, ToolCallFinished)]
    assert (finished.status, finished.error and finished.error.type) == ("failed", "failed")


def test_a_local_shell_call_is_titled_by_its_command(tmp_path: Path) -> None:
    action = {"type": "exec", "command": ["bash", "-lc", "ls"]}
    path = _session(
        tmp_path,
        [
            _item({"type": "local_shell_call", "call_id": "c1", "action": action}),
            _item({"type": "function_call_output", "call_id": "c1", "output": "a.txt"}),
        ],
    )
    events = list(load_codex_session(path).events())
    [started] = [e for e in events if isinstance(e, ToolCallStarted)]
    assert (started.name, started.kind, started.title) == ("local_shell", "execute", "bash -lc ls")
    [finished] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert (finished.call_id, finished.status, finished.output) == ("c1", "completed", "a.txt")


def test_unknown_records_are_kept_and_bad_payloads_are_notices(tmp_path: Path) -> None:
    path = _session(
        tmp_path,
        [
            json.dumps({"timestamp": "t", "type": "compacted", "payload": {"message": "x"}}),
            _event({"type": "exec_command_end", "call_id": "c1"}),
            _item({"type": "web_search_call", "status": "completed"}),
            json.dumps({"timestamp": "t", "type": "turn_context", "payload": {"model": 7}}),
            "not json",
            _item({"type": "function_call_output", "call_id": "c9", "output": "x"}),
        ],
    )
    conversation = load_codex_session(path)
    assert [p.line for p in conversation.problems] == [6]
    events = list(conversation.events())
    assert [e.upstream_type for e in events if isinstance(e, Unknown)] == [
        "compacted",
        "event_msg/exec_command_end",
        "response_item/web_search_call",
    ]
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert notices[1:] == [
        "a turn_context record: Expected `str`, got `int` - at `$.model`",
        "a result for unknown call 'c9'",
    ]


def test_sessions_are_matched_to_projects_by_the_folder_they_record(tmp_path: Path) -> None:
    day = tmp_path / ".codex" / "sessions" / "2026" / "11" / "25"
    day.mkdir(parents=True)
    for n, cwd in enumerate(["/a", "/b", "/a"]):
        meta = {
            "timestamp": f"t{n}",
            "type": "session_meta",
            "payload": {"id": f"s{n}", "cwd": cwd},
        }
        prompt = _event({"type": "user_message", "message": f"p{n}"})
        (day / f"rollout-{n}.jsonl").write_text(f"{json.dumps(meta)}\n{prompt}\n")
    (day / "notes.jsonl").write_text("not a rollout\n")
    home = CodexHome(tmp_path)
    assert [(i.id, i.index) for i in home.sessions("/a")] == [("s0", 1), ("s2", 2)]
    assert [(i.project, i.id, i.index) for i in home.all_sessions()] == [
        ("/a", "s0", 1),
        ("/a", "s2", 2),
        ("/b", "s1", 1),
    ]
    assert home.find("s1", "/b").first_prompt == "p1"


def test_codex_home_is_codex_s_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "conf"))
    assert CodexHome().projects_dir == tmp_path / "conf" / "sessions"
    monkeypatch.delenv("CODEX_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert CodexHome().projects_dir == tmp_path / ".codex" / "sessions"


def test_load_session_tells_a_rollout_from_the_others() -> None:
    assert isinstance(load_session(RECORDINGS / "answer.jsonl"), CodexConversation)
    for other in ("claude/0.16.2", "qwen/0.24.4"):
        assert not isinstance(load_session(FIXTURES / other / "answer.jsonl"), CodexConversation)


def test_usage_prices_nothing_it_has_no_price_for(tmp_path: Path) -> None:
    day = tmp_path / ".codex" / "sessions" / "2026" / "11" / "25"
    day.mkdir(parents=True)
    (day / "rollout-x.jsonl").write_bytes((RECORDINGS / "edit.jsonl").read_bytes())
    report = usage(CodexHome(tmp_path), by="model")
    [row] = report.rows
    assert (row.key, row.requests, row.input_tokens, row.output_tokens, row.cost_usd) == (
        "gpt-5.4-mini",
        3,
        300,
        30,
        None,
    )
