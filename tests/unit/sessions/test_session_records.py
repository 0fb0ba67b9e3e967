"""Replaying session records: Gemini's rules line by line, and bad input never raising.

The inputs here are synthetic (named so); recorded files are covered elsewhere.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
from hypothesis import given, strategies as st
from kit.hostile import texts

from gemwire.events import Notice, Unknown, UserMessage
from gemwire.sessions import RawMessage, read_session_info
from gemwire.sessions.gemini import load_session
from gemwire.wire.gemini_session import MessageRecord

HEADER = {"sessionId": "s-1", "projectHash": "h", "startTime": "2026-01-01T00:00:00.000Z"}
CONTEXT = {
    "id": "d04923d38bb0f6017037e74183378ef4",
    "timestamp": "t",
    "type": "user",
    "content": [{"text": "<session_context>\nctx\n</session_context>"}],
}


def user(mid: str, text: str) -> dict[str, Any]:
    return {"id": mid, "timestamp": "t", "type": "user", "content": [{"text": text}]}


def gemini(mid: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"id": mid, "timestamp": "t", "type": "gemini", "content": text, **extra}


def write(path: Path, *records: Any, tail: bytes = b"") -> Path:
    lines = [r if isinstance(r, bytes) else json.dumps(r).encode() for r in records]
    path.write_bytes(b"".join(line + b"\n" for line in lines) + tail)
    return path


def ids(path: Path) -> list[str]:
    return [m.id for m in load_session(path).messages]


def test_upserts_replace_in_place_and_later_headers_win(tmp_path: Path) -> None:
    path = write(
        tmp_path / "synthetic.jsonl",
        HEADER,
        user("u1", "hi"),
        gemini("g1", "first"),
        user("u2", "again"),
        gemini("g1", "second"),
        {**HEADER, "startTime": "2026-01-02T00:00:00.000Z"},
        {"$set": {"summary": "a summary", "lastUpdated": "2026-01-03T00:00:00.000Z"}},
    )
    conversation = load_session(path)
    assert [m.id for m in conversation.messages] == ["u1", "g1", "u2"]
    assert conversation.messages[1] == MessageRecord(
        id="g1", timestamp="t", type="gemini", content="second"
    )
    assert (conversation.start_time, conversation.last_updated, conversation.summary) == (
        "2026-01-02T00:00:00.000Z",
        "2026-01-03T00:00:00.000Z",
        "a summary",
    )
    assert conversation.format == "jsonl"
    assert conversation.problems == []


def test_rewind_drops_the_message_and_everything_after(tmp_path: Path) -> None:
    base = [HEADER, user("u1", "a"), gemini("g1", "b"), user("u2", "c"), gemini("g2", "d")]
    assert ids(write(tmp_path / "a.jsonl", *base, {"$rewindTo": "u2"})) == ["u1", "g1"]
    # An id that is not there rewinds everything (Gemini does the same).
    assert ids(write(tmp_path / "b.jsonl", *base, {"$rewindTo": "nope"})) == []
    after = [*base, {"$rewindTo": "g1"}, user("u3", "e")]
    assert ids(write(tmp_path / "c.jsonl", *after)) == ["u1", "u3"]


def test_set_messages_replaces_the_list_but_keeps_recorded_versions(tmp_path: Path) -> None:
    recorded = gemini(
        "g1",
        "Writing it.",
        thoughts=[{"subject": "Plan", "description": "one line", "timestamp": "t"}],
        tokens={"input": 1, "output": 2, "cached": 0, "total": 3},
    )
    replayed = {
        "id": "g1",
        "timestamp": "t2",
        "type": "gemini",
        "content": [{"text": "**Plan** one line", "thought": True}, {"text": "Writing it."}],
    }
    path = write(
        tmp_path / "synthetic.jsonl",
        HEADER,
        user("u1", "go"),
        recorded,
        {"$set": {"messages": [CONTEXT]}},  # the startup recorder of a resume
        {"$set": {"messages": [CONTEXT, user("u1", "go"), replayed]}},  # the replay
        user("u2", "more"),
    )
    conversation = load_session(path)
    assert [m.id for m in conversation.messages] == [CONTEXT["id"], "u1", "g1", "u2"]
    assert conversation.messages[2] == msgspec.convert(recorded, MessageRecord)


def test_a_replayed_message_of_another_type_is_not_confused(tmp_path: Path) -> None:
    path = write(
        tmp_path / "synthetic.jsonl",
        HEADER,
        gemini("x", "model text"),
        {"$set": {"messages": [user("x", "now a prompt")]}},
    )
    assert [m.type for m in load_session(path).messages] == ["user"]


def test_partial_last_line_and_garbage_become_notices(tmp_path: Path) -> None:
    path = write(
        tmp_path / "synthetic.jsonl",
        HEADER,
        user("u1", "hi"),
        b"\x00garbage{",
        b"[1, 2]",
        b'{"what": "ever"}',
        tail=b'{"id":"g1","timestamp":"t","type":"gem',
    )
    conversation = load_session(path)
    assert [m.id for m in conversation.messages] == ["u1"]
    assert [(p.line, p.message.split(" (")[0]) for p in conversation.problems] == [
        (3, "not JSON"),
        (4, "not a JSON object"),
        (5, "unknown record"),
        (6, "partial last line skipped"),
    ]
    events = list(conversation.events())
    notices = [e for e in events if isinstance(e, Notice)]
    assert len(notices) == 4
    assert notices[-1].message == (
        f"{path}: line 6: partial last line skipped (the CLI may be writing it)"
    )
    assert [type(e).__name__ for e in events] == [
        "SessionStarted",
        "Notice",
        "Notice",
        "Notice",
        "Notice",
        "UserMessage",
    ]


def test_empty_file_is_a_notice_not_an_error(tmp_path: Path) -> None:
    path = tmp_path / "session-2026-01-01T00-00-abcdefgh.jsonl"
    path.write_bytes(b"")
    conversation = load_session(path)
    assert (conversation.session_id, conversation.messages, conversation.resumable) == (
        None,
        [],
        False,
    )
    assert [p.message for p in conversation.problems] == ["empty file"]
    events = list(conversation.events())
    assert [e.type for e in events] == ["session_started", "notice"]
    assert isinstance(events[1], Notice)
    assert events[1].severity == "error"
    info = read_session_info(path)
    assert (info.id, info.resumable, info.problems, info.short_id) == (None, False, 1, "abcdefgh")


def test_a_message_of_unexpected_shape_is_kept_raw(tmp_path: Path) -> None:
    odd = {"id": "g1", "timestamp": "t", "type": "gemini", "content": "x", "tokens": "lots"}
    conversation = load_session(write(tmp_path / "synthetic.jsonl", HEADER, odd))
    [message] = conversation.messages
    assert isinstance(message, RawMessage)
    assert json.loads(message.raw) == odd
    events = list(conversation.events())
    assert isinstance(events[-1], Unknown)
    assert json.loads(events[-1].raw) == odd


def test_legacy_pretty_printed_json(tmp_path: Path) -> None:
    document = {**HEADER, "lastUpdated": "x", "messages": [user("u1", "hi"), gemini("g1", "yo")]}
    path = tmp_path / "session-2025-01-01T00-00-s-1xxxxx.json"
    path.write_text(json.dumps(document, indent=2))
    conversation = load_session(path)
    assert (conversation.format, [m.id for m in conversation.messages]) == ("json", ["u1", "g1"])
    # A legacy user message may be a plain string (0.15.4).
    path.write_text(json.dumps({**document, "messages": [{**user("u1", ""), "content": "hi\n"}]}))
    assert [e.text for e in load_session(path).events() if isinstance(e, UserMessage)] == ["hi\n"]


def test_resumable_is_geminis_exact_rule(tmp_path: Path) -> None:
    files = iter(range(100))

    def resumable(*messages: dict[str, Any], header: dict[str, Any] = HEADER) -> bool:
        path = write(tmp_path / f"{next(files)}.jsonl", header, *messages)
        return load_session(path).resumable

    assert not resumable(CONTEXT)
    assert not resumable(CONTEXT, user("u", "/help"), user("v", "?"), user("w", "  "))
    assert not resumable(gemini("g", "  "), {"id": "i", "timestamp": "t", "type": "info"})
    assert resumable(user("u", "hi"))
    assert resumable(gemini("g", "", thoughts=[{"subject": "s", "description": "d"}]))
    assert resumable(gemini("g", "", toolCalls=[{"id": "c"}]))
    # Gemini counts a tool-response message as a prompt ("[Function Response: x]").
    assert resumable(
        {"id": "r", "timestamp": "t", "type": "user",
         "content": [{"functionResponse": {"name": "x", "response": {}}}]}
    )  # fmt: skip
    # A subagent transcript is never offered for --resume.
    assert not resumable(user("u", "a"), header={**HEADER, "kind": "subagent"})


RECORD = st.one_of(
    st.builds(user, st.sampled_from("abcde"), texts(max_size=5)),
    st.builds(gemini, st.sampled_from("abcde"), texts(max_size=5)),
    st.builds(lambda i: {"$rewindTo": i}, st.sampled_from("abcdez")),
    st.builds(
        lambda ms: {"$set": {"messages": ms}},
        st.lists(st.builds(user, st.sampled_from("abcde"), st.just("r")), max_size=3),
    ),
)


def reference(records: list[dict[str, Any]]) -> list[str]:
    """Gemini's loadConversationRecord, for ids only, as plainly as possible."""
    order: dict[str, None] = {}
    for record in records:
        if "$rewindTo" in record:
            keys = list(order)
            cut = keys.index(record["$rewindTo"]) if record["$rewindTo"] in order else 0
            order = dict.fromkeys(keys[:cut])
        elif "$set" in record:
            order = dict.fromkeys(m["id"] for m in record["$set"]["messages"])
        else:
            order[record["id"]] = None
    return list(order)


@given(st.lists(RECORD, max_size=12))
def test_replay_keeps_the_ids_gemini_keeps(records: list[dict[str, Any]]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp) / "s.jsonl", HEADER, *records)
        assert ids(path) == reference(records)
        assert read_session_info(path).messages == len(reference(records))


@given(st.lists(st.binary(max_size=40), max_size=8), st.binary(max_size=40))
def test_any_bytes_load_without_raising(lines: list[bytes], tail: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        path.write_bytes(b"\n".join([json.dumps(HEADER).encode(), *lines]) + b"\n" + tail)
        conversation = load_session(path)
        list(conversation.events())
        read_session_info(path)
