"""A cancelled turn in the middle of a session, run live by the real ``gemini --acp`` 0.61.0
against the scripted model: a prompt whose answer runs a tool, a prompt cancelled while the
model answers, another prompt. On the cancel Gemini CLI rolls its history back to before the
cancelled prompt and writes it into the session file as a ``$set`` of ``messages`` in API
form (the model turn's calls as ``functionCall`` parts; the recorded message with the calls,
``toolCalls``, named no more). The saved view keeps the calls where they ran, and leaves out
what Gemini rolled back. Recorded into tests/fixtures/gemini-sessions/0.61.0/
acp_cancel_rolled_back (``GEMWIRE_RECORD=1``, machine paths replaced), its golden events
beside it; tests/unit/sessions/test_gemini_rolled_back.py reads the recording."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest
from kit.corpus import FIXTURES
from kit.saved_differences import DIFFERENCES
from kit.saved_sessions import record_gemini_session, summary

from gemwire.events import Event, MessageDelta, UserMessage
from gemwire.runners.acp import AcpClient
from gemwire.sessions import GeminiHome, load_session
from gemwire.testing import FunctionCall, Hang, Reply, Scenario, ScriptedModel, Text
from gemwire.testing.agents import isolated_agent

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

RECORDING = FIXTURES / "gemini-sessions" / "0.61.0" / "acp_cancel_rolled_back"
PROMPTS = ("go", "next", "and again")


async def _run(root: Path) -> list[Event]:
    script = Scenario(
        turns=[
            Reply(
                [Text("On it."), FunctionCall("run_shell_command", {"command": "touch made.txt"})]
            ),
            Reply([Text("Done.")]),
            Reply([Text("Working on it"), Hang()]),  # cancelled
            Reply([Text("Second answer.")]),
        ],
        files={"a.txt": "old line\n"},
    )
    live: list[Event] = []
    with ScriptedModel(script) as model:
        env = isolated_agent("gemini", model, files=script.files, root=root)
        with anyio.fail_after(150):
            async with AcpClient(env.acp_options(permissions="all")) as client:
                session = await client.new_session()
                for prompt in PROMPTS:
                    async with session.prompt(prompt) as turn:
                        async for event in turn:
                            live.append(event)
                            if isinstance(event, MessageDelta) and event.text == "Working on it":
                                await turn.cancel()
        assert env.live_processes() == []
        # The model was given the first turn again, but not the cancelled one.
        last = json.dumps(model.requests[-1].body)
        assert "touch made.txt" in last
        assert '"next"' not in last
    assert model.problems == []
    return live


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path.resolve()  # as the agent reports it


async def test_a_rolled_back_session_keeps_its_tool_calls(root: Path) -> None:
    live = await _run(root)
    [info] = GeminiHome(root / "home").sessions(root / "workspace")
    saved = list(load_session(info.path).events())
    assert [e.text for e in saved if isinstance(e, UserMessage)] == ["go", "and again"]
    ours, theirs = summary(saved), summary(live)
    differ = DIFFERENCES["gemini"][RECORDING.name]
    assert {k: v for k, v in ours.items() if k not in differ} == {
        k: v for k, v in theirs.items() if k not in differ
    }
    assert ours["answer"] == "On it.Done.Second answer."
    assert theirs["answer"] == "On it.Done.Working on itSecond answer."
    assert [kind for _, kind in ours["calls"]] == ["execute"]
    assert [status for _, status in ours["finished"]] == ["completed"]
    if os.environ.get("GEMWIRE_RECORD") == "1":
        record_gemini_session(Path(info.path), root, RECORDING)
