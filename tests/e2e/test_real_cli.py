"""The real, pinned Gemini CLIs against the scripted model: the test bed itself works."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from kit.budget import load

from gemwire.testing import (
    PINNED_VERSIONS,
    CliRun,
    Fail,
    FunctionCall,
    Hang,
    RecordingCase,
    Reply,
    Scenario,
    Text,
)
from gemwire.testing.recorder import run_case

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

WRITE_AND_SHELL = Scenario(
    turns=[
        Reply(
            [
                Text("I'll write the file."),
                FunctionCall("write_file", {"file_path": "hello.txt", "content": "hi there\n"}),
            ]
        ),
        Reply(
            [
                FunctionCall(
                    "run_shell_command",
                    {"command": "cat hello.txt; echo oops >&2; exit 3", "description": "Show it"},
                )
            ]
        ),
        Reply([Text("Done. "), Text("File written.")]),
    ]
)

# What each version prints for the shell call: 0.15.4 runs it in a PTY 80 columns wide.
SHELL_OUTPUT = {
    "0.61.0": "hi there\noops",
    "0.30.0": "hi there\noops",
    "0.15.4": "hi there" + " " * 72 + "\noops",
}
# 0.15.4 joins stdin and an empty -p prompt with a blank line.
USER_CONTENT = {
    "0.61.0": "write hello.txt and show it",
    "0.30.0": "write hello.txt and show it",
    "0.15.4": "write hello.txt and show it\n\n",
}


def events(stdout: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def without_volatile(event: dict[str, Any]) -> dict[str, Any]:
    """Drop what differs from run to run: timestamps, ids, timings and token stats."""
    return {
        k: v for k, v in event.items() if k not in {"timestamp", "session_id", "tool_id", "stats"}
    }


@pytest.mark.parametrize("version", PINNED_VERSIONS)
async def test_writes_a_file_and_runs_a_shell_command(version: str, tmp_path: Path) -> None:
    case = RecordingCase(
        scenario=WRITE_AND_SHELL,
        runs=[CliRun(prompt="write hello.txt and show it", args=["--approval-mode", "yolo"])],
    )
    result = await run_case(case, version, "stream-json", tmp_path)
    (output,) = result.outputs
    assert (output.returncode, output.timed_out) == (0, False)
    stream = events(output.stdout)
    assert [without_volatile(e) for e in stream] == [
        {"type": "init", "model": "auto-gemini-3" if version == "0.30.0" else "auto"},
        {"type": "message", "role": "user", "content": USER_CONTENT[version]},
        {"type": "message", "role": "assistant", "content": "I'll write the file.", "delta": True},
        {
            "type": "tool_use",
            "tool_name": "write_file",
            "parameters": {"file_path": "hello.txt", "content": "hi there\n"},
        },
        {"type": "tool_result", "status": "success"},
        {
            "type": "tool_use",
            "tool_name": "run_shell_command",
            "parameters": {
                "command": "cat hello.txt; echo oops >&2; exit 3",
                "description": "Show it",
            },
        },
        {"type": "tool_result", "status": "success", "output": SHELL_OUTPUT[version]},
        {"type": "message", "role": "assistant", "content": "Done. ", "delta": True},
        {"type": "message", "role": "assistant", "content": "File written.", "delta": True},
        {"type": "result", "status": "success"},
    ]
    # Each result answers its call, and the session id is the one the CLI announced.
    assert (
        stream[3]["tool_id"] == stream[4]["tool_id"] != stream[5]["tool_id"] == stream[6]["tool_id"]
    )
    assert stream[-1]["stats"]["tool_calls"] == 2
    assert (result.env.workspace / "hello.txt").read_text() == "hi there\n"
    # The model saw each tool's result in the next request.
    streaming = [r for r in result.requests if r.rpc == "streamGenerateContent"]
    assert [r.turn for r in streaming] == [0, 1, 2]
    assert [[f["name"] for f in r.function_responses()] for r in streaming] == [
        [],
        ["write_file"],
        ["run_shell_command"],
    ]
    assert result.problems == []
    # The session file is named after the session id; JSONL since 0.39, one JSON before.
    (session_file,) = result.env.session_files()
    suffix = ".jsonl" if version == "0.61.0" else ".json"
    assert session_file.name.endswith(f"-{stream[0]['session_id'][:8]}{suffix}")


async def test_429_with_retry_info_is_retried_and_succeeds(tmp_path: Path) -> None:
    case = RecordingCase(
        scenario=Scenario(
            turns=[
                Fail(429, retry_delay=1, quota_id="GenerateRequestsPerMinutePerProjectPerModel"),
                Reply([Text("Hello after a retry.")]),
            ]
        ),
        runs=[CliRun(prompt="say hello")],
    )
    result = await run_case(case, "0.61.0", "stream-json", tmp_path)
    (output,) = result.outputs
    assert output.returncode == 0
    stream = events(output.stdout)
    assert [e["type"] for e in stream] == ["init", "message", "message", "result"]
    assert stream[2]["content"] == "Hello after a retry."
    assert stream[3]["status"] == "success"
    assert [r.turn for r in result.requests if r.rpc == "streamGenerateContent"] == [0, 1]
    assert b"Attempt 1 failed: Resource has been exhausted (e.g. check quota)." in output.stderr
    assert result.problems == []


async def test_a_hanging_model_is_stopped_with_nothing_left_behind(tmp_path: Path) -> None:
    case = RecordingCase(
        scenario=Scenario(turns=[Reply([Text("partial answer"), Hang()])]),
        runs=[CliRun(prompt="say hello")],
        # Long enough for the CLI to start and stream its partial answer (2 s idle), on a
        # loaded machine too.
        timeout=8 * max(1.0, load()),
    )
    result = await run_case(case, "0.61.0", "stream-json", tmp_path)
    (output,) = result.outputs
    assert output.timed_out
    stream = events(output.stdout)
    assert [e["type"] for e in stream] == ["init", "message", "message"]
    assert stream[2]["content"] == "partial answer"
    # No process of the run survives: every one of them carried the isolated home.
    assert result.env.live_processes() == []
    # The scripted model stopped too, and its port is closed.
    port = urlsplit(result.model_url).port or 0
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2)
