"""Lone surrogates: JSON text as Node writes half of a surrogate pair, read as U+FFFD by every
decoder of agent output, each saying so (issue 22, item 5)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings, strategies as st
from kit.hostile import CHARACTERS
from msgspec import UNSET

from gemwire._normalize.gemini import GeminiNormalizer
from gemwire._normalize.gemini_json import GeminiJsonNormalizer
from gemwire.events import MessageDelta, Notice, SessionStarted, TurnCompleted
from gemwire.protocol._lone_surrogates import LoneSurrogates, repaired
from gemwire.protocol.acp import AcpClientConnection, AgentRequest, SessionUpdate
from gemwire.protocol.gemini import GeminiStreamDecoder, InvalidUtf8, MalformedLine
from gemwire.protocol.gemini_json import (
    ErrorDocumentScanner,
    JsonOutputDecoder,
    RepairedOutput,
    decode_json_output,
)
from gemwire.protocol.gemini_session import Problem, RecordReplay, legacy_record
from gemwire.protocol.jsonrpc import JsonRpcConnection, Request
from gemwire.sessions import read_session_info
from gemwire.sessions.gemini import load_session
from gemwire.wire import acp
from gemwire.wire.gemini_json import JsonOutput
from gemwire.wire.gemini_stream import MessageEvent

NOTICE = (
    "replaced 1 lone UTF-16 surrogate(s) in the agent's output with U+FFFD"
    " (half of a character, e.g. an emoji cut in two)"
)

# Text as a JavaScript string is: UTF-16 code units. Python's str holds surrogates as such,
# so any mix of these is a string Node may hold, lone halves and valid pairs alike; the
# backslashes and the letters of an escape make text that only looks like one; the rest is
# one character of each kind that breaks parsers.
_HALVES = ["\ud83d", "\ude00", "\udbff", "\udc00", "\U0001f600"]
_LOOKALIKES = ["\\", "\\\\", "u", "d83d", "ude00", '"', "a", "\u00e9", "\u20ac", "\n", "\ufffd"]
js_strings = st.lists(st.sampled_from([*_HALVES, *_LOOKALIKES, *CHARACTERS]), max_size=24).map(
    "".join
)


def as_node_reads(text: str) -> str:
    """What Node makes of a string's UTF-16 code units as UTF-8: U+FFFD for each lone half."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def node_stringify(value: str) -> bytes:
    """``JSON.stringify(value)`` as Node writes it: non-ASCII raw (UTF-8), pairs as their
    character, only a lone surrogate escaped (lower-case hex)."""
    joined = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    text = json.dumps(joined, ensure_ascii=False)
    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m[0]):04x}", text).encode()


def lone_halves(text: str) -> int:
    return as_node_reads(text).count("\ufffd") - text.count("\ufffd")


def decode_repairing(data: bytes) -> tuple[object, int]:
    try:
        return msgspec.json.decode(data), 0
    except msgspec.DecodeError:
        fixed = repaired(data)
        assert fixed is not None
        return msgspec.json.decode(fixed[0]), fixed[1]


@settings(max_examples=400)
@given(js_strings, st.booleans())
def test_any_string_node_wrote_decodes_as_node_reads_it(text: str, ascii_only: bool) -> None:
    document = {text: [text, {"k": text}]}
    data = (
        json.dumps(document, ensure_ascii=True).encode()
        if ascii_only
        else b'{"%s":[%s,{"k":%s}]}' % ((node_stringify(text)[1:-1],) + (node_stringify(text),) * 2)
    )
    read = as_node_reads(text)
    assert decode_repairing(data) == ({read: [read, {"k": read}]}, 3 * lone_halves(text))


@settings(max_examples=400)
@given(js_strings)
def test_valid_pairs_and_escaped_backslashes_are_left_alone(text: str) -> None:
    text = as_node_reads(text)  # no lone halves left
    for data in (json.dumps(text).encode(), node_stringify(text)):
        assert repaired(data) is None
        assert msgspec.json.decode(data) == text


@pytest.mark.parametrize(
    ("data", "fixed", "count"),
    [
        (rb'"\ud83d"', rb'"\ufffd"', 1),
        (rb'"\uD83D\uDE00\uDE00"', rb'"\uD83D\uDE00\ufffd"', 1),  # upper-case hex too
        (rb'"\\ud83d \\\ud83d"', rb'"\\ud83d \\\ufffd"', 1),  # odd runs escape, even do not
        (rb'"\ud83d\\ude00"', rb'"\ufffd\\ude00"', 1),  # a literal "\ude00" makes no pair
        (rb'"\udc00\ud800"', rb'"\ufffd\ufffd"', 2),  # low then high: two lone halves
        (rb'"\u005cud83d"', None, 0),  # an escaped backslash, then text
    ],
)
def test_repaired_rewrites_only_lone_escapes(data: bytes, fixed: bytes | None, count: int) -> None:
    assert repaired(data) == (None if fixed is None else (fixed, count))


# One answer chunk of Gemini CLI, cut in the middle of an emoji.
CUT = b'{"type":"message","timestamp":"t","role":"assistant","content":"big \\ud83d","delta":true}'
CUT_EVENT = MessageEvent(timestamp="t", role="assistant", content="big \ufffd", delta=True)


@pytest.mark.parametrize("strict", [False, True])
def test_stream_json_keeps_the_chunk_after_a_record(strict: bool) -> None:
    decoder = GeminiStreamDecoder(strict=strict)
    assert decoder.feed(CUT + b"\n") == [LoneSurrogates(count=1), CUT_EVENT]


def test_stream_json_with_invalid_utf8_and_a_lone_surrogate_in_one_line() -> None:
    decoder = GeminiStreamDecoder()
    line = CUT.replace(b"big", b"b\xffg")
    content = "b\ufffdg \ufffd"
    assert decoder.feed(line + b"\n") == [
        InvalidUtf8(count=1),
        LoneSurrogates(count=1),
        MessageEvent(timestamp="t", role="assistant", content=content, delta=True),
    ]


def test_stream_json_a_line_that_is_no_event_either_way_stays_as_written() -> None:
    line = b'{"type":"message","role":"assistant","content":"\\ud83d"}'  # no timestamp
    decoder = GeminiStreamDecoder()
    [item] = decoder.feed(line + b"\n")
    assert isinstance(item, MalformedLine)
    assert item.line == line.decode()


def test_the_stream_reducer_says_so_in_a_notice() -> None:
    events = GeminiNormalizer().feed_all([LoneSurrogates(count=1), CUT_EVENT])
    assert events == [
        Notice(
            agent="gemini", session_id=None, severity="warning", message=NOTICE, source="gemwire"
        ),
        MessageDelta(agent="gemini", session_id=None, text="big \ufffd"),
    ]


DOCUMENT = b'{\n  "session_id": "s1",\n  "response": "big \\ud83d"\n}'


@pytest.mark.parametrize("strict", [False, True])
def test_json_output_is_repaired(strict: bool) -> None:
    document = JsonOutput(session_id="s1", response="big \ufffd")
    expected = RepairedOutput(document=document, repair=LoneSurrogates(count=1))
    assert decode_json_output(DOCUMENT, strict=strict) == expected
    assert decode_json_output(DOCUMENT.decode(), strict=strict) == expected


def test_json_output_reducer_answers_and_says_so() -> None:
    decoder = JsonOutputDecoder()
    decoder.feed(DOCUMENT)
    events = GeminiJsonNormalizer().finish(decoder.close(), exit_code=0)
    assert events[:3] == [
        SessionStarted(agent="gemini", session_id="s1"),
        Notice(
            agent="gemini", session_id="s1", severity="warning", message=NOTICE, source="gemwire"
        ),
        MessageDelta(agent="gemini", session_id="s1", text="big \ufffd"),
    ]
    assert isinstance(events[-1], TurnCompleted)
    assert (events[-1].ok, events[-1].answer) == (True, "big \ufffd")


def test_an_error_document_on_stderr_is_repaired_and_said() -> None:
    scanner, normalizer = ErrorDocumentScanner(), GeminiJsonNormalizer()
    lines = ["{", '  "session_id": "s2",', '  "error": {"type": "E", "message": "\\udc00"}', "}"]
    documents = [d for d in map(scanner.feed_line, lines) if d is not None]
    assert [type(d) for d in documents] == [RepairedOutput]
    assert normalizer.error_document(documents[0]) == [
        SessionStarted(agent="gemini", session_id="s2"),
        Notice(
            agent="gemini", session_id="s2", severity="warning", message=NOTICE, source="gemwire"
        ),
    ]
    turn = normalizer.finish(None, exit_code=1)[-1]
    assert isinstance(turn, TurnCompleted)
    assert turn.error is not None
    assert turn.error.message == "\ufffd"


SESSION_HEADER = b'{"sessionId":"s","projectHash":"h","startTime":"t","lastUpdated":"t"}\n'
SESSION_MESSAGE = b'{"id":"m1","timestamp":"t","type":"user","content":[{"text":"big \\ud83d"}]}\n'


@pytest.mark.parametrize("mode", [{}, {"lines": True}, {"summary": True}, {"keep_raw": True}])
def test_a_session_message_is_kept_with_a_problem(mode: dict[str, Any]) -> None:
    replay = RecordReplay(**mode)
    replay.feed_block(SESSION_HEADER + SESSION_MESSAGE, 1)
    assert replay.problems == [Problem(line=2, message=NOTICE)]
    [message] = replay.messages
    if mode.get("summary"):
        assert message.prompt == "big \ufffd"
    else:
        assert message.content == [{"text": "big \ufffd"}]
    replay = RecordReplay(**mode)
    for n, line in enumerate((SESSION_HEADER, SESSION_MESSAGE), 1):  # one line at a time
        replay.feed(line, n)
    assert replay.problems == [Problem(line=2, message=NOTICE)]
    assert len(replay.messages) == 1


def test_a_legacy_session_document_is_kept_with_a_problem() -> None:
    document = b'{"sessionId":"s","projectHash":"h","messages":[%s]}' % SESSION_MESSAGE.strip()
    replay, why = legacy_record(document, summary=False)
    assert why is None
    assert replay is not None
    assert replay.problems == [Problem(line=0, message=NOTICE)]
    assert replay.messages[0].content == [{"text": "big \ufffd"}]


def test_json_rpc_reads_the_request_after_a_record() -> None:
    line = b'{"jsonrpc":"2.0","id":7,"method":"x","params":{"text":"\\ud83d"}}\n'
    assert JsonRpcConnection().receive_data(line) == [
        LoneSurrogates(count=1),
        Request(id=7, method="x", params=b'{"text":"\\ufffd"}'),
    ]


def test_acp_agent_request_and_update_are_typed_after_a_record() -> None:
    conn = AcpClientConnection()
    write = (
        b'{"jsonrpc":"2.0","id":3,"method":"fs/write_text_file","params":'
        b'{"sessionId":"s","path":"/w/a.txt","content":"cut \\ud83d"}}\n'
    )
    update = (
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
        b'{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\\ude00"}}}}\n'
    )
    params = acp.WriteTextFileRequest(session_id="s", path="/w/a.txt", content="cut \ufffd")
    chunk = acp.update.AgentMessageChunk(content=acp.TextContent(text="\ufffd"))
    assert conn.receive_data(write + update) == [
        LoneSurrogates(count=1),
        AgentRequest(id=3, method="fs/write_text_file", params=params),
        LoneSurrogates(count=1),
        SessionUpdate(session_id="s", update=chunk),
    ]
    assert params.meta is UNSET


def test_a_loaded_session_keeps_the_message_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "session-cut.jsonl"
    path.write_bytes(
        SESSION_HEADER
        + b'{"id":"m1","timestamp":"t","type":"user","content":[{"text":"say hello"}]}\n'
        + b'{"id":"m2","timestamp":"t","type":"gemini","content":"Hello \\ud83d"}\n'
    )
    conversation = load_session(path)
    events = [e for e in conversation.events() if isinstance(e, Notice | MessageDelta)]
    assert events == [
        Notice(
            agent="gemini",
            session_id="s",
            severity="warning",
            message=f"{path}: line 3: {NOTICE}",
            source="gemwire",
        ),
        MessageDelta(agent="gemini", session_id="s", text="Hello \ufffd"),
    ]
    assert [m.type for m in conversation.messages] == ["user", "gemini"]
    info = read_session_info(path)
    assert (info.messages, info.problems) == (2, 1)
