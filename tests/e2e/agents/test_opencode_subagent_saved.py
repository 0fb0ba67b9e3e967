"""OpenCode's ``task`` subagent, run live by the real pinned OpenCode 1.18.33 against the
scripted model: its saved sessions (the parent's and the subagent's own, in the database)
link as tests/fixtures/opencode/1.18.33/subagent.sql (recorded by this test with
``GEMWIRE_RECORD=1``, machine paths replaced) does: the subagent's events follow the
``task`` call that started it, carrying its id (saved_sessions.py for the rest)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import msgspec
import pytest
from kit.corpus import FIXTURES
from kit.opencode_db import build, dump
from kit.saved_sessions import scrub, summary

from gemwire.events import Event, MessageDelta, ToolCallStarted
from gemwire.runners.acp import run_acp
from gemwire.sessions import (
    OpenCodeConversation,
    OpenCodeHome,
    load_session,
    nested_opencode_events,
)
from gemwire.testing import FunctionCall, Reply, Scenario, ScriptedModel, Text
from gemwire.testing.agents import isolated_agent

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

RECORDING = FIXTURES / "opencode" / "1.18.33" / "subagent.sql"
TASK = {"description": "look around", "prompt": "say sub done", "subagent_type": "general"}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path.resolve()  # as the agent reports it


async def test_a_task_subagent_is_its_own_session_linked_to_its_call(root: Path) -> None:
    script = Scenario(
        turns=[
            Reply([Text("Delegating."), FunctionCall("task", TASK)]),
            Reply([Text("Sub done.")]),  # the subagent's answer
            Reply([Text("Done.")]),
        ],
        files={"a.txt": "old line\n"},
    )
    with ScriptedModel(script) as model:
        env = isolated_agent("opencode", model, files=script.files, root=root)
        with anyio.fail_after(150):
            async with run_acp("go", env.acp_options(permissions="all")) as turn:
                live = [event async for event in turn]
        assert env.live_processes() == []
    assert model.problems == []
    answer = "".join(e.text for e in live if isinstance(e, MessageDelta))
    assert answer == "Delegating.Done."
    [info] = OpenCodeHome(root / "home").sessions(root / "workspace")
    [sub] = info.subagents
    database = Path(info.path.rpartition("#")[0])
    assert summary(list(load_session(database).events())) == summary(live)  # the main session
    saved = _nested(database)
    [call] = [e for e in saved if isinstance(e, ToolCallStarted)]
    assert (call.name, call.kind, call.input) == ("task", "think", TASK)
    inner = [e for e in saved if e.parent_call_id == call.call_id]
    assert {e.session_id for e in inner} == {sub.id}
    assert [(e.type, getattr(e, "text", None)) for e in inner] == [
        ("session_started", None),
        ("user_message", "say sub done"),
        ("message_delta", "Sub done."),
        ("usage", None),
    ]
    if os.environ.get("GEMWIRE_RECORD") == "1":
        RECORDING.write_text(scrub(dump(database), root))
        recorded = build(RECORDING.read_text(), root / "recorded" / "opencode.db")
        events = [msgspec.to_builtins(e) for e in _nested(recorded)]
        RECORDING.with_suffix(".events.jsonl").write_text(
            "".join(json.dumps(e, sort_keys=True) + "\n" for e in events)
        )


def _nested(database: Path) -> list[Event]:
    """The main session's events, its subagent's nested (`nested_opencode_events`)."""
    conversation = load_session(database)
    assert isinstance(conversation, OpenCodeConversation)
    return list(nested_opencode_events(conversation))
