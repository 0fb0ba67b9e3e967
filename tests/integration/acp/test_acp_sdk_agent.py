"""A second, independent ACP agent (built on the official ACP Python SDK): nothing in the
client is Gemini-specific."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest

from gemwire.events import (
    Event,
    FileChanged,
    PermissionOption,
    PermissionRequested,
    PlanEntry,
    PlanUpdated,
    SessionStarted,
    SessionUpdated,
    ThoughtDelta,
    TokenUsage,
    ToolCallFinished,
    ToolCallStarted,
    TurnCompleted,
)
from gemwire.runners.acp import AcpOptions, AcpTurnResult, allow_all_commands, run_acp

pytest.importorskip("acp")
pytestmark = pytest.mark.anyio

AGENT = Path(__file__).with_name("sdk_agent.py")


async def run(tmp_path: Path, **kwargs: object) -> tuple[list[Event], AcpTurnResult]:
    permissions = kwargs.pop("permissions", "deny")
    options = AcpOptions(
        command=(sys.executable, str(AGENT)),
        cwd=str(tmp_path),
        permissions=permissions,  # type: ignore[arg-type]
        mode="ask",  # chosen: gemwire does not know this agent's modes
    )
    with anyio.fail_after(60):
        async with run_acp("remember milk", options, **kwargs) as turn:  # type: ignore[arg-type]
            events = [event async for event in turn]
    return events, turn.result


async def test_a_turn_with_every_kind_of_update(tmp_path: Path) -> None:
    folder = str(tmp_path)  # pytest gives a real path (no symlinks)
    events, result = await run(tmp_path, permissions="edits")
    agent, sid = "acp:sdk-agent", "sdk-session-1"
    assert [e.type for e in events] == [
        "session_started",
        "user_message",
        "thought_delta",
        "plan_updated",
        "tool_call_started",
        "permission_requested",
        "permission_resolved",
        "tool_call_finished",
        "file_changed",
        "session_updated",
        "message_delta",
        "usage",
        "turn_completed",
    ]
    assert events[0] == SessionStarted(
        agent=agent, session_id=sid, cwd=folder, agent_version="1.2.3"
    )
    assert events[2] == ThoughtDelta(agent=agent, session_id=sid, text="**Planning**")
    assert events[3] == PlanUpdated(
        agent=agent,
        session_id=sid,
        entries=[PlanEntry(content="write notes.txt", status="in_progress", priority="high")],
    )
    path = os.path.join(folder, "notes.txt")
    started = events[4]
    assert isinstance(started, ToolCallStarted)
    assert (started.call_id, started.kind, started.title, started.input) == (
        "edit-1",
        "edit",
        "Write notes.txt",
        {"path": path, "content": "remember milk"},
    )
    assert events[5] == PermissionRequested(
        agent=agent,
        session_id=sid,
        request_id="0",
        call_id="edit-1",
        options=[
            PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
            PermissionOption(option_id="deny", name="Deny", kind="reject_once"),
        ],
        title="Write notes.txt",  # the call as started (the request names only its id)
        kind="edit",
    )
    assert events[8] == FileChanged(
        agent=agent, session_id=sid, path=path, change="created", call_id="edit-1", derived=False
    )
    assert events[9] == SessionUpdated(
        agent=agent, session_id=sid, update="current_mode_update", data={"currentModeId": "focused"}
    )
    assert (tmp_path / "notes.txt").read_text() == "remember milk\n"
    final = events[-1]
    assert isinstance(final, TurnCompleted)
    assert result.usage == TokenUsage(
        input_tokens=20, output_tokens=10, cached_tokens=5, total_tokens=30
    )
    assert (result.ok, result.answer, result.stop_reason) == (
        True,
        "Noted: remember milk",
        "end_turn",
    )


async def test_denied_by_default(tmp_path: Path) -> None:
    events, result = await run(tmp_path)
    (finished,) = [e for e in events if isinstance(e, ToolCallFinished)]
    assert (finished.status, finished.output) == ("failed", "denied")
    assert not (tmp_path / "notes.txt").exists()
    assert result.files_changed == []


async def test_a_client_terminal(tmp_path: Path) -> None:
    _events, result = await run(tmp_path, terminal_policy=allow_all_commands)
    assert result.answer == "from terminal\nNoted: remember milk"
