"""A loaded conversation keeps each message's final line and decodes it when it is read:
the memory it holds, `Messages` as a sequence, and the one message kept raw that a whole
decode would have refused."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

from gemwire.events import Notice, Unknown
from gemwire.protocol.gemini_messages import Messages
from gemwire.sessions import Problem, RawMessage
from gemwire.sessions.gemini import load_session
from gemwire.wire.gemini_session import MessageRecord

RECORDED = next(
    (Path(__file__).resolve().parents[2] / "fixtures" / "gemini" / "0.61.0").glob(
        "session_resume_edits/stream-json/gemini-home/tmp/*/chats/session-*.jsonl"
    )
)
HEADER = {"sessionId": "s-1", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z"}


def big_session(path: Path, copies: int) -> int:
    """The recorded messages (upserts and ``$set`` lines included, the resume's replay of the
    whole list left out) again and again, under new ids."""
    lines = RECORDED.read_bytes().splitlines()
    records = [json.loads(line) for line in lines[1:]]
    with path.open("wb") as out:
        out.write(lines[0] + b"\n")
        for n in range(copies):
            for record in records:
                if "messages" in record.get("$set", {}):
                    continue
                if isinstance(record.get("id"), str):
                    record = {**record, "id": f"{record['id']}-{n}"}
                out.write(json.dumps(record, separators=(",", ":")).encode() + b"\n")
    return path.stat().st_size


def test_a_loaded_session_holds_less_than_its_file(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    size = big_session(path, 400)
    tracemalloc.start()
    try:
        conversation = load_session(path)
        held, _ = tracemalloc.get_traced_memory()
        eager = load_session(path, keep_originals=True)
        held_eagerly = tracemalloc.get_traced_memory()[0] - held
    finally:
        tracemalloc.stop()
    assert size > 2_000_000
    assert held < 1.5 * size  # every message decoded: about 2.5 times the file (below)
    assert held_eagerly > 2.5 * size  # the decoded messages, and their originals
    assert conversation.messages == eager.messages
    assert len(conversation.messages) == 400 * 8  # the run's 8 messages, each copy


def test_messages_read_like_a_list(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    records: list[dict[str, Any]] = [
        HEADER,
        {"id": "u1", "timestamp": "t", "type": "user", "content": "hi"},
        {"id": "g1", "timestamp": "t", "type": "gemini", "content": "hello"},
        {"id": "u1", "timestamp": "t2", "type": "user", "content": "hi again"},
        {"id": "g2", "timestamp": "t", "type": "gemini", "tokens": "many"},
    ]
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records))
    messages = load_session(path).messages
    assert isinstance(messages, Messages)
    u1 = MessageRecord(id="u1", timestamp="t2", type="user", content="hi again")
    g1 = MessageRecord(id="g1", timestamp="t", type="gemini", content="hello")
    assert (len(messages), messages[0], messages[-2], messages[:2]) == (3, u1, g1, [u1, g1])
    g2 = messages[2]
    assert isinstance(g2, RawMessage)
    assert (g2.id, g2.type, json.loads(g2.raw)) == ("g2", "gemini", records[4])
    assert g2.reason == "unexpected shape: Expected `object | null`, got `str` - at `$.tokens`"
    assert list(messages) == [u1, g1, g2] == messages
    assert messages != [u1, g1]
    assert repr(messages) == repr([u1, g1, g2])


def test_a_number_beyond_a_double_is_a_raw_message_when_kept_as_a_line(tmp_path: Path) -> None:
    """Decoded whole (``keep_originals``) the line is not JSON to msgspec and the earlier
    version stays; kept as a line, that is only found out when it is read (see
    `gemwire.protocol.gemini_messages`): it is kept raw, and said."""
    path = tmp_path / "s.jsonl"
    first = b'{"id":"u1","timestamp":"t","type":"user","content":"hi"}'
    huge = b'{"id":"u1","timestamp":"t","type":"user","content":[{"text":"hi","n":1e999}]}'
    path.write_bytes(json.dumps(HEADER).encode() + b"\n" + first + b"\n" + huge + b"\n")
    whole = load_session(path, keep_originals=True)
    assert whole.messages == [MessageRecord(id="u1", timestamp="t", type="user", content="hi")]
    why = "not JSON (Number out of range - at `$[...][0][...]`)"
    assert whole.problems == [Problem(line=3, message=why)]
    lines = load_session(path)
    assert lines.problems == []
    [raw] = lines.messages
    assert raw == RawMessage(id="u1", type=None, raw=huge.decode(), reason=why)
    _, notice, unknown = lines.events()
    assert isinstance(notice, Notice)
    assert (notice.message, type(unknown)) == (f"message 'u1': {why}", Unknown)
    assert not lines.resumable
