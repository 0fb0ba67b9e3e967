"""Subagent sessions linked to the parent's invoke_agent call (recorded with Gemini CLI 0.61.0)."""

from __future__ import annotations

import json
import os
from typing import Any

import msgspec
from click.testing import CliRunner

from gemwire.cli import main
from gemwire.events import encode_event
from gemwire.sessions import nested_events, parent_call, subagent_files
from gemwire.sessions.gemini import load_session

CALL = "invoke_agent__invoke_agent_1795361673769_0"
PARENT = "e0a7b10a-a15b-4b15-8c47-3dcc78a05063"
CHILD = "26e56bb0-ed15-43f8-ba9f-280dbc768ab1"


def _recording(materialize: Any) -> Any:
    return materialize("0.61.0", "session_subagent", "json")


def test_a_subagent_session_names_the_call_that_ran_it(materialize: Any) -> None:
    run = _recording(materialize)
    child = run.chats / PARENT / f"{CHILD}.jsonl"
    conversation = load_session(child)
    assert (conversation.kind, conversation.parent_id, conversation.parent_call_id) == (
        "subagent",
        PARENT,
        CALL,
    )
    events = list(conversation.events())
    assert {event.parent_call_id for event in events} == {CALL}
    assert json.loads(encode_event(events[0]))["parent_call_id"] == CALL
    assert parent_call(child, CHILD) == (PARENT, CALL)


def test_a_main_session_has_no_parent_and_no_field(materialize: Any) -> None:
    run = _recording(materialize)
    conversation = load_session(run.session_files()[0])
    assert (conversation.parent_id, conversation.parent_call_id) == (None, None)
    assert all(b"parent_call_id" not in encode_event(e) for e in conversation.events())


def test_subagent_events_follow_the_call_that_ran_them(materialize: Any) -> None:
    run = _recording(materialize)
    conversation = load_session(run.session_files()[0])
    assert subagent_files(conversation) == {CALL: run.chats / PARENT / f"{CHILD}.jsonl"}
    seen = [
        (e.type, e.session_id, getattr(e, "call_id", None), e.parent_call_id)
        for e in nested_events(conversation)
    ]
    unset = msgspec.UNSET
    assert seen == [
        ("session_started", PARENT, None, unset),
        ("user_message", PARENT, None, unset),
        ("message_delta", PARENT, None, unset),
        ("tool_call_started", PARENT, CALL, unset),
        ("session_started", CHILD, None, CALL),
        ("user_message", CHILD, None, CALL),
        ("thought_delta", CHILD, None, CALL),
        ("tool_call_started", CHILD, f"{CHILD}#0-0", CALL),
        ("tool_call_finished", CHILD, f"{CHILD}#0-0", CALL),
        ("usage", CHILD, None, CALL),
        ("tool_call_started", CHILD, f"{CHILD}#1-0", CALL),
        ("tool_call_finished", CHILD, f"{CHILD}#1-0", CALL),
        ("usage", CHILD, None, CALL),
        ("tool_call_finished", PARENT, CALL, unset),
        ("usage", PARENT, None, unset),
        ("message_delta", PARENT, None, unset),
        ("usage", PARENT, None, unset),
    ]


def test_a_subagent_file_without_its_parent_is_not_linked(materialize: Any) -> None:
    run = _recording(materialize)
    for path in run.session_files():
        path.unlink()
    conversation = load_session(run.chats / PARENT / f"{CHILD}.jsonl")
    assert conversation.parent_call_id is None
    assert all(e.parent_call_id is msgspec.UNSET for e in conversation.events())


def test_sessions_show_nests_the_subagent_under_its_call(materialize: Any) -> None:
    run = _recording(materialize)
    where = ["--gemini-home", str(run.home), "--project", str(run.workspace)]
    result = CliRunner().invoke(main, ["sessions", "show", "latest", *where, "--json"])
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    types = [(e["type"], e.get("parent_call_id")) for e in events]
    start = types.index(("tool_call_started", None))
    assert types[start + 1] == ("session_started", CALL)
    assert types.count(("tool_call_finished", None)) == 1
    assert sum(1 for _, parent in types if parent == CALL) == 9
    plain = CliRunner().invoke(main, ["sessions", "show", "latest", *where])
    assert f"# subagent {CHILD} (call {CALL})" in plain.stdout


def test_a_loop_or_fifo_beside_the_parent_does_not_stop_linking(materialize: Any) -> None:
    run = _recording(materialize)
    # Named with the parent's short id, before its file (2026-11-22T15-34) in name order.
    (run.chats / f"session-2026-01-01T00-00-{PARENT[:8]}.jsonl").symlink_to(
        f"session-2026-01-01T00-00-{PARENT[:8]}.jsonl"
    )
    os.mkfifo(run.chats / f"session-2026-01-01T00-01-{PARENT[:8]}.jsonl")
    child = run.chats / PARENT / f"{CHILD}.jsonl"
    assert parent_call(child, CHILD) == (PARENT, CALL)
    assert load_session(child).parent_call_id == CALL
