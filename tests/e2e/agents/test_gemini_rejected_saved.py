"""A call the user rejected, run live by the real ``gemini --acp`` 0.61.0 against the scripted
model: the model writes a file, the permission is refused (the ``deny`` preset), and the model
answers again. Gemini CLI saves no ``toolCalls`` entry for the rejected call, only its
``functionResponse`` ("… was canceled by the user.") in a user message between the two answers.
The saved view shows the call there, cancelled, as the live run did, and the two answers stay
apart. Recorded into tests/fixtures/gemini-sessions/0.61.0/acp_rejected_call
(``GEMWIRE_RECORD=1``, machine paths replaced), its golden events beside it;
tests/unit/sessions/test_gemini_rejected_call.py reads the recording."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from kit.corpus import FIXTURES
from kit.saved_sessions import record_gemini_session, summary

from gemwire.events import Event
from gemwire.runners.acp import AcpClient
from gemwire.sessions import GeminiHome, load_session
from gemwire.testing import FunctionCall, Reply, Scenario, ScriptedModel, Text
from gemwire.testing.agents import isolated_agent

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

RECORDING = FIXTURES / "gemini-sessions" / "0.61.0" / "acp_rejected_call"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path.resolve()  # as the agent reports it


async def test_a_rejected_call_is_saved_between_the_answers(root: Path) -> None:
    script = Scenario(
        turns=[
            Reply(
                [
                    Text("I'll put it in `a.py`."),
                    FunctionCall("write_file", {"file_path": "a.py", "content": "x = 1\n"}),
                ]
            ),
            Reply([Text("Done: wrote a.py.")]),
        ]
    )
    live: list[Event] = []
    with ScriptedModel(script) as model:
        env = isolated_agent("gemini", model, files=script.files, root=root)
        with anyio.fail_after(150):
            async with AcpClient(env.acp_options(permissions="deny")) as client:
                session = await client.new_session()
                async with session.prompt("write a.py") as turn:
                    live += [event async for event in turn]
        assert env.live_processes() == []
    assert model.problems == []
    assert not (root / "workspace" / "a.py").exists()
    [info] = GeminiHome(root / "home").sessions(root / "workspace")
    saved = list(load_session(info.path).events())
    ours, theirs = summary(saved), summary(live)
    assert ours == theirs
    assert [status for _, status in ours["finished"]] == ["cancelled"]
    kinds = [
        e.type
        for e in saved
        if e.type in ("message_delta", "tool_call_started", "tool_call_finished")
    ]
    assert kinds == ["message_delta", "tool_call_started", "tool_call_finished", "message_delta"]
    if os.environ.get("GEMWIRE_RECORD") == "1":
        record_gemini_session(Path(info.path), root, RECORDING)
