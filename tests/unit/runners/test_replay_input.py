"""`replay_gemini_stream` on input a run does not end like: lines after ``result``, and a
``--output-format json`` document instead of stream-json."""

from __future__ import annotations

from kit.corpus import RECORDED

from gemwire import replay_gemini_stream
from gemwire._normalize.gemini_replay import replay_gemini_batches
from gemwire.events import MessageDelta, Notice, TurnCompleted

INIT = b'{"type":"init","timestamp":"t","session_id":"s","model":"auto"}\n'
RESULT = b'{"type":"result","timestamp":"t","status":"success"}\n'
LATE = b'{"type":"message","timestamp":"t","role":"assistant","content":"late"}\n'


def test_lines_after_the_result_come_out_before_turn_completed() -> None:
    events = list(replay_gemini_stream([INIT + RESULT + LATE + b"a stray line\n"]))
    assert [e.type for e in events] == [
        "session_started",
        "message_delta",
        "notice",
        "turn_completed",
    ]
    assert isinstance(events[-1], TurnCompleted)
    assert events[-1].ok


def test_a_json_format_document_is_read_as_one_and_says_so() -> None:
    data = (RECORDED / "plain_answer/json/run-1.stdout").read_bytes()
    chunks = [data[i : i + 7] for i in range(0, len(data), 7)]  # split anywhere
    events = list(replay_gemini_stream(chunks))
    assert [e.type for e in events] == [
        "notice",
        "session_started",
        "message_delta",
        "usage",
        "turn_completed",
    ]
    notice = events[0]
    assert isinstance(notice, Notice)
    assert notice.message.startswith("this is a json-format document")
    assert (notice.severity, notice.source) == ("info", "gemwire")
    assert events[2] == MessageDelta(
        agent="gemini",
        session_id="a184e7d4-84b7-40b2-91fa-82814df05386",
        text="Hello! How can I help you today?",
    )
    assert isinstance(events[-1], TurnCompleted)
    assert events[-1].ok


def test_a_json_format_error_document_is_a_failed_turn() -> None:
    document = b'{\n  "session_id": "s",\n  "error": {"type": "Error", "message": "boom"}\n}\n'
    events = list(replay_gemini_stream([document]))
    assert [e.type for e in events] == ["notice", "session_started", "turn_completed"]
    turn = events[-1]
    assert isinstance(turn, TurnCompleted)
    assert (turn.ok, turn.error.message if turn.error else None) == (False, "boom")


def test_batches_are_the_events_by_chunk_and_none_is_empty() -> None:
    data = (RECORDED / "write_and_shell/stream-json/run-1.stdout").read_bytes()
    chunks = [data[i : i + 300] for i in range(0, len(data), 300)] + [LATE, b"", b"noise\n"]
    batches = list(replay_gemini_batches(chunks))
    assert [[e.type for e in batch] for batch in batches] == [
        ["session_started", "user_message"],
        ["message_delta", "tool_call_started"],
        ["tool_call_finished", "file_changed"],
        ["tool_call_started", "tool_call_finished"],
        ["message_delta", "message_delta"],
        ["usage"],  # turn_completed is held back to the end
        ["message_delta"],
        ["notice"],
        ["turn_completed"],
    ]
    assert [e for batch in batches for e in batch] == list(replay_gemini_stream(chunks))
