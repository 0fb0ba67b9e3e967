"""follow_session_file on the real Gemini CLI 0.61.0: live thoughts the stream never has."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from gemwire import RunResult, run_gemini
from gemwire.events import Event, FileChanged, ThoughtDelta, TurnCompleted
from gemwire.testing import (
    FunctionCall,
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    Thought,
    Usage,
)

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

SCENARIO = Scenario(
    turns=[
        Reply(
            [
                Thought("**Planning**\n\nWrite the file first."),
                Thought("**Checking**\n\nOne line is enough."),
                FunctionCall("write_file", {"file_path": "notes.txt", "content": "hi\n"}),
            ],
            usage=Usage(prompt=120, output=10, thoughts=30),
        ),
        Reply(
            [Thought("**Done**\n\nSay so."), Text("Written.")],
            usage=Usage(prompt=250, output=5, thoughts=7),
        ),
    ]
)


async def run(tmp_path: Path, follow: bool) -> tuple[list[Event], RunResult, IsolatedGemini]:
    with ScriptedModel(SCENARIO) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        options = env.gemini_options(approval_mode="yolo", follow_session_file=follow)
        async with run_gemini("write notes.txt", options) as handle:
            events = [event async for event in handle]
    return events, handle.result, env


async def test_thoughts_arrive_in_order_with_one_turn_completed(tmp_path: Path) -> None:
    events, result, env = await run(tmp_path, follow=True)

    thoughts = [e for e in events if isinstance(e, ThoughtDelta)]
    assert [t.text for t in thoughts] == [
        "**Planning**\n\nWrite the file first.",
        "**Checking**\n\nOne line is enough.",
        "**Done**\n\nSay so.",
    ]
    assert {t.origin for t in thoughts} == {"session_file"}
    assert sum(isinstance(e, TurnCompleted) for e in events) == 1
    turn = events[-1]
    assert isinstance(turn, TurnCompleted)
    assert turn.ok
    # The first model response's thoughts come before the second response's text.
    answer = next(i for i, e in enumerate(events) if e.type == "message_delta")
    assert events.index(thoughts[1]) < answer
    exact = [e for e in events if isinstance(e, FileChanged) and not e.derived]
    assert [(e.path, e.change, e.origin) for e in exact] == [
        (str(env.workspace / "notes.txt"), "created", "session_file")
    ]
    assert result.files_changed == exact  # in the place of the stream's derived `written`
    assert turn.usage is not None
    assert turn.usage.context_tokens == 250  # the last request's prompt


async def test_without_following_the_stream_has_no_thoughts(tmp_path: Path) -> None:
    events, _, _ = await run(tmp_path, follow=False)
    assert not any(isinstance(e, ThoughtDelta) for e in events)
    assert all(e.origin is msgspec.UNSET for e in events)
    turn = events[-1]
    assert isinstance(turn, TurnCompleted)
    assert turn.usage is not None
    assert turn.usage.context_tokens is msgspec.UNSET
