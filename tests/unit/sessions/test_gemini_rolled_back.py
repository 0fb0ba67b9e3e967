"""A session Gemini CLI 0.61.0 rolled back after a cancel (recorded by
tests/e2e/agents/test_gemini_cancel_saved.py): its ``$set`` of ``messages`` holds the model
turn in API form, the call as a ``functionCall`` part, and names the recorded message with
the call (``toolCalls``) no more. gemwire keeps that message: the call and its result stay
between the two answers (they were lost, and the answers ran together)."""

from __future__ import annotations

import json

import msgspec
from kit.corpus import FIXTURES

from gemwire.events import MessageDelta, ToolCallFinished, ToolCallStarted, UserMessage
from gemwire.sessions import load_session, read_session_info, to_markdown

RECORDING = FIXTURES / "gemini-sessions" / "0.61.0" / "acp_cancel_rolled_back"
[SESSION] = sorted(p for p in RECORDING.glob("session-*.jsonl") if ".events" not in p.name)


def test_the_rolled_back_file_holds_the_turn_in_api_form() -> None:
    records = [json.loads(line) for line in SESSION.read_text().splitlines()]
    [*_, rolled_back] = [r["$set"]["messages"] for r in records if "messages" in r.get("$set", {})]
    parts = [
        list(part) for m in rolled_back if isinstance(m["content"], list) for part in m["content"]
    ]
    assert ["functionCall"] in parts
    assert ["functionResponse"] in parts
    assert not any("toolCalls" in m for m in rolled_back)


def test_golden_events() -> None:
    conversation = load_session(SESSION)
    assert conversation.problems == []
    events = [msgspec.to_builtins(e) for e in conversation.events()]
    golden = SESSION.with_suffix(".events.jsonl").read_text().splitlines()
    assert events == [json.loads(line) for line in golden]


def test_the_calls_stay_between_the_answers_and_the_rolled_back_turn_is_gone() -> None:
    events = list(load_session(SESSION).events())
    said = [
        (e.type, getattr(e, "text", None) or getattr(e, "name", None) or getattr(e, "status", None))
        for e in events
        if isinstance(e, UserMessage | MessageDelta | ToolCallStarted | ToolCallFinished)
    ]
    assert said == [
        ("user_message", "go"),
        ("message_delta", "On it."),
        ("tool_call_started", "run_shell_command"),
        ("tool_call_finished", "completed"),
        ("message_delta", "Done."),
        ("user_message", "and again"),
        ("message_delta", "Second answer."),
    ]
    info = read_session_info(SESSION)
    assert (info.resumable, info.first_prompt, info.problems) == (True, "go", 0)
    markdown = to_markdown(load_session(SESSION))
    assert markdown.index("On it.") < markdown.index("touch made.txt") < markdown.index("Done.")
