"""Claude Code's ``Task`` subagent, run live by the real pinned claude-code-acp against the
scripted model: its saved session and subagent file link as tests/fixtures/claude/0.16.2/subagent
(recorded by this test with ``GEMWIRE_RECORD=1``, machine paths replaced) does."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import anyio
import pytest
from kit.corpus import FIXTURES
from kit.saved_sessions import scrub

from gemwire.events import MessageDelta, ToolCallStarted
from gemwire.runners.acp import run_acp
from gemwire.sessions import ClaudeHome, load_session, nested_claude_events
from gemwire.sessions.claude import ClaudeConversation
from gemwire.testing import FunctionCall, Reply, Scenario, ScriptedModel, Text
from gemwire.testing.agents import isolated_agent

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

RECORDING = FIXTURES / "claude" / "0.16.2" / "subagent"
TASK = {"description": "look around", "prompt": "say sub done", "subagent_type": "general-purpose"}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path.resolve()  # as the agent reports it


async def test_a_task_subagent_is_saved_apart_and_linked_to_its_call(root: Path) -> None:
    script = Scenario(
        turns=[
            Reply([Text("Delegating."), FunctionCall("Task", TASK)]),
            Reply([Text("Sub done.")]),  # the subagent's answer
            Reply([Text("Done.")]),
        ],
        files={"a.txt": "old line\n"},
    )
    with ScriptedModel(script) as model:
        env = isolated_agent("claude", model, files=script.files, root=root, version="0.16.2")
        with anyio.fail_after(150):
            async with run_acp("go", env.acp_options(permissions="all")) as turn:
                live = [event async for event in turn]
    assert model.problems == []
    answer = "".join(e.text for e in live if isinstance(e, MessageDelta))
    assert answer == "Delegating.Done."
    _check_saved(root)


def _check_saved(root: Path) -> None:
    [info] = ClaudeHome(root / "home").sessions(root / "workspace")
    conversation = load_session(info.path)
    assert isinstance(conversation, ClaudeConversation)
    saved = list(nested_claude_events(conversation))
    [call] = [e for e in saved if isinstance(e, ToolCallStarted)]
    assert (call.name, call.input) == ("Task", TASK)
    inner = [e for e in saved if e.parent_call_id == call.call_id]
    assert [(e.type, getattr(e, "text", None)) for e in inner] == [
        ("session_started", None),
        ("user_message", "say sub done"),
        ("message_delta", "Sub done."),
        ("usage", None),
    ]
    if os.environ.get("GEMWIRE_RECORD") == "1":
        folder = Path(info.path).parent
        shutil.rmtree(RECORDING, ignore_errors=True)
        for path in folder.rglob("*.jsonl"):
            recorded = RECORDING / path.relative_to(folder)
            recorded.parent.mkdir(parents=True, exist_ok=True)
            recorded.write_text(scrub(path.read_text(), root))
