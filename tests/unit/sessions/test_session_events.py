"""What a saved session adds to the live stream: thoughts, usage, recorded diffs; and exports."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import msgspec
from click.testing import CliRunner

from gemwire.cli import main
from gemwire.events import (
    FileChanged,
    ModelUsage,
    ThoughtDelta,
    TokenUsage,
    ToolCallFinished,
    UsageReported,
)
from gemwire.sessions import GeminiHome, claude_tool, to_unified_messages
from gemwire.sessions.gemini import load_session

Make = Callable[[str, str], Any]  # conftest.Materialized


def test_thoughts_and_usage_per_message(materialize: Make) -> None:
    run = materialize("0.61.0", "thoughts")
    [path] = run.session_files()
    events = list(load_session(path).events(cwd=str(run.workspace)))
    sid = "89e848ce-40a1-44c6-b3cc-d5908d8340b3"
    assert [e.type for e in events] == [
        "session_started",
        "user_message",
        "thought_delta",
        "thought_delta",
        "message_delta",
        "usage",
    ]
    assert events[2:4] == [
        ThoughtDelta(
            agent="gemini",
            session_id=sid,
            text="**Considering the question**\n\nThe user wants an answer.",
        ),
        ThoughtDelta(agent="gemini", session_id=sid, text="**Answering**\n\nKeep it short."),
    ]
    usage = ModelUsage(input_tokens=120, output_tokens=8, cached_tokens=0, total_tokens=158)
    assert events[5] == UsageReported(
        agent="gemini",
        session_id=sid,
        usage=TokenUsage(
            input_tokens=120,
            output_tokens=8,
            cached_tokens=0,
            total_tokens=158,
            by_model={"gemini-3.8-flash": usage},
        ),
    )


def test_edits_are_recorded_not_derived(materialize: Make) -> None:
    run = materialize("0.61.0", "write_and_shell")
    [path] = run.session_files()
    events = list(load_session(path).events(cwd=str(run.workspace)))
    [changed] = [e for e in events if isinstance(e, FileChanged)]
    assert changed == FileChanged(
        agent="gemini",
        session_id=changed.session_id,
        path=f"{run.workspace}/hello.txt",
        change="created",  # the live stream can only say "written"
        call_id=changed.call_id,
        derived=False,
    )
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [(e.status, e.output) for e in finished][1] == ("completed", "hi there\noops")
    assert finished[0].diff == (
        "Index: hello.txt\n"
        "===================================================================\n"
        "--- hello.txt\tOriginal\n+++ hello.txt\tWritten\n@@ -0,0 +1,1 @@\n+hi there\n"
    )


def test_0_15_records_no_diff_so_the_change_is_derived(materialize: Make) -> None:
    run = materialize("0.15.4", "replace")
    [path] = run.session_files()
    [changed] = [e for e in load_session(path).events() if isinstance(e, FileChanged)]
    assert (changed.path, changed.change, changed.derived) == (
        f"{run.workspace}/app.py",
        "modified",
        True,
    )


def test_a_history_replay_alone_still_maps_calls_and_results(materialize: Make) -> None:
    """Only the $set.messages replay of a resume (synthetic: the recorded lines removed)."""
    run = materialize("0.61.0", "session_resume_edits")
    [path] = run.session_files()
    lines = path.read_bytes().splitlines(keepends=True)
    replay = next(n for n, line in enumerate(lines) if b'"$set":{"messages":[{' in line and n > 5)
    path.write_bytes(lines[0] + b"".join(lines[replay:]))
    events = list(load_session(path).events(cwd=str(run.workspace)))
    assert [e.type for e in events][:8] == [
        "session_started",
        "user_message",
        "thought_delta",  # a thought Part: Gemini joined subject and description
        "message_delta",
        "tool_call_started",
        "tool_call_finished",  # from the functionResponse of the next user message
        "message_delta",
        "user_message",
    ]
    assert isinstance(events[5], ToolCallFinished)
    assert events[5].status == "completed"


def test_claude_export(materialize: Make) -> None:
    run = materialize("0.61.0", "session_resume_edits")
    [path] = run.session_files()
    conversation = load_session(path, keep_originals=True)
    unified = list(to_unified_messages(conversation.messages, conversation.originals))
    assert [(m["role"], [b["type"] for b in m["content"]]) for m in unified] == [
        ("user", ["text"]),
        ("assistant", ["thinking", "text", "tool_use", "tool_result"]),
        ("assistant", ["text"]),
        ("user", ["text"]),
        ("assistant", ["tool_use", "tool_result"]),
        ("assistant", ["text"]),
    ]
    write = unified[1]
    assert write["content"][0] == {
        "type": "thinking",
        "thinking": "Planning the file: One line is enough.",
    }
    assert write["content"][2] == {
        "type": "tool_use",
        "id": "write_file__write_file_1795361688386_0",
        "name": "Write",
        "input": {"file_path": "notes.txt", "content": "helo world\n"},
    }
    assert write["content"][3]["is_error"] is False
    assert write["usage"] == {
        "inputTokens": 150,
        "outputTokens": 12,
        "cacheReadTokens": 0,
        "totalTokens": 171,
        "input_tokens": 150,
        "output_tokens": 12,
        "cache_read_input_tokens": 0,
        "total_tokens": 171,
    }
    assert (write["tool"], write["model"], write["timestamp"]) == (
        "gemini",
        "gemini-3.8-flash",
        1795361688476,
    )
    # _original is the record exactly as the file holds it (the last version of the message).
    recorded = [json.loads(line) for line in path.read_text().splitlines()]
    assert write["_original"] == [r for r in recorded if r.get("id") == write["id"]][-1]
    assert unified[4]["content"][0]["name"] == "Edit"
    assert unified[4]["content"][0]["input"] == {
        "file_path": "notes.txt",
        "old_string": "helo",
        "new_string": "hello",
    }


def test_claude_tool_names_and_inputs() -> None:
    assert claude_tool("read_file", {"file_path": "a", "start_line": 3, "end_line": 5}) == (
        "Read",
        {"file_path": "a", "offset": 3, "limit": 3},
    )
    assert claude_tool("read_file", {"absolute_path": "/a", "offset": 0, "limit": 9}) == (
        "Read",
        {"file_path": "/a", "offset": 1, "limit": 9},
    )
    assert claude_tool("list_directory", {"dir_path": "src"}) == (
        "Glob",
        {"pattern": "*", "path": "src"},
    )
    assert claude_tool("run_shell_command", {"command": "ls", "dir_path": "x"}) == (
        "Bash",
        {"command": "ls"},
    )
    assert claude_tool("grep_search", {"pattern": "x", "include_pattern": "*.py"}) == (
        "Grep",
        {"pattern": "x", "glob": "*.py"},
    )
    assert claude_tool("mcp_srv_tool", {"a": 1}) == ("mcp_srv_tool", {"a": 1})


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["sessions", *args])
    return result.exit_code, result.stdout + result.stderr


def test_cli_list_show_export(materialize: Make) -> None:
    run = materialize("0.61.0", "session_subagent")
    where = ["--gemini-home", str(run.home), "--project", str(run.workspace)]
    code, out = cli("list", *where, "--json")
    assert code == 0
    [listed] = [json.loads(line) for line in out.splitlines()]
    info = GeminiHome(run.home).sessions(run.workspace)[0]
    assert listed == msgspec.to_builtins(info)
    assert {k: listed[k] for k in ("id", "kind", "messages", "first_prompt", "index")} == {
        "id": "90888d74-b441-4fd1-9f00-755d5eb2f1c3",
        "kind": "main",
        "messages": 5,
        "first_prompt": "where is add defined?",
        "index": 1,
    }
    assert listed["project"] == str(run.workspace)
    code, out = cli("list", *where)
    assert code == 0
    assert out == (
        "  1. where is add defined? (2026-11-22T15:34:31.512Z, 5 messages, 1 subagents) "
        "[90888d74-b441-4fd1-9f00-755d5eb2f1c3]\n"
    )
    code, out = cli("show", "latest", *where)
    assert code == 0
    assert "[think] invoke_agent: codebase_investigator" in out
    assert "# subagent e10ad38a-7394-4747-a6f8-9e3a0e3ba062" in out
    code, out = cli("export", "1", *where)
    assert code == 0
    assert [json.loads(line)["type"] for line in out.splitlines()][:3] == [
        "session_started",
        "user_message",
        "message_delta",
    ]
    code, out = cli("export", "1", *where, "--format", "claude")
    assert (code, json.loads(out.splitlines()[0])["role"]) == (0, "user")
    code, out = cli("show", "2", *where)
    assert (code, "Invalid session identifier" in out) == (1, True)
    code, out = cli("list", "--all-projects", "--gemini-home", str(run.home), "--json")
    assert (code, len(out.splitlines())) == (0, 1)
