"""SSE framing (`protocol.sse`): what goes out comes back whole, in any chunking and with
any line end, and an event over the cap is dropped unheld."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from gemwire.protocol.framing import OversizedLine
from gemwire.protocol.sse import KEEP_ALIVE, SseDecoder, SseEvent, encode_event


def events(chunks: list[bytes], limit: int = 1 << 20) -> list[SseEvent | OversizedLine]:
    decoder = SseDecoder(limit)
    return [event for chunk in chunks for event in decoder.feed(chunk)] + decoder.close()


def decode(chunks: list[bytes], limit: int = 1 << 20) -> list[bytes | OversizedLine]:
    """The data of each event."""
    return [e.data if isinstance(e, SseEvent) else e for e in events(chunks, limit)]


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


# What a JSON-RPC line may hold: anything but the line breaks (raw ones are whitespace).
messages = st.lists(
    st.binary(min_size=1, max_size=60).map(lambda b: b.replace(b"\n", b"").replace(b"\r", b"")),
    max_size=8,
).map(lambda items: [item for item in items if item.strip()])


@settings(max_examples=300, deadline=None)
@given(messages, st.lists(st.integers(min_value=0, max_value=2000), max_size=10), st.booleans())
def test_every_message_comes_back_whole_in_any_chunking(
    sent: list[bytes], cuts: list[int], keep_alive: bool
) -> None:
    stream = b"".join((KEEP_ALIVE if keep_alive else b"") + encode_event(m) for m in sent)
    assert decode(split_at(stream, cuts)) == sent


def test_data_lines_join_with_a_newline_and_other_fields_are_skipped() -> None:
    stream = b'id: 4\r\nevent: x\r\ndata:{\r\ndata:  "a": 1}\r\n\r\nretry: 5\n\n'
    assert events([stream]) == [SseEvent(b'{\n "a": 1}', "x")]


@pytest.mark.parametrize("line_end", [b"\n", b"\r\n", b"\r"])
def test_fields_comments_and_names_with_every_line_end(line_end: bytes) -> None:
    text = (
        b": keep-alive\n\n"
        b"id: 1\nevent: gemwire\ndata: a\ndata:b\n\n"
        b"data: plain\n\n"
        b"retry: 10\nevent: x\n\n"  # no data: nothing dispatched, and the name is dropped
        b"id: 2\nfoo: bar\nevent: gemwire\ndata:  two spaces\n\n"
        b"data\n\n"  # a field without a colon: an empty value
        b"datum: no\nevent\ndata: unnamed\n\n"
    )
    assert events([text.replace(b"\n", line_end)]) == [
        SseEvent(b"a\nb", "gemwire"),
        SseEvent(b"plain", "message"),
        SseEvent(b" two spaces", "gemwire"),
        SseEvent(b"", "message"),
        SseEvent(b"unnamed", "message"),
    ]


@settings(max_examples=200, deadline=None)
@given(
    messages,
    st.lists(st.integers(min_value=0, max_value=2000), max_size=10),
    st.sampled_from([b"\n", b"\r\n", b"\r"]),
)
def test_named_events_come_back_whole_with_any_line_end_cut_anywhere(
    sent: list[bytes], cuts: list[int], line_end: bytes
) -> None:
    stream = b"".join(b"event: gemwire\n" + encode_event(m) for m in sent)
    stream = stream.replace(b"\n", line_end)
    assert events(split_at(stream, cuts)) == [SseEvent(m, "gemwire") for m in sent]


def test_a_message_with_raw_line_breaks_goes_out_as_several_data_lines() -> None:
    assert encode_event(b'{\r\n"a":\r1\n}') == b'data: {\ndata: "a":\ndata: 1\ndata: }\n\n'
    assert decode([encode_event(b'{\r\n"a":\r1\n}')]) == [b'{\n"a":\n1\n}']


def test_an_event_over_the_cap_is_dropped_and_the_next_comes_through() -> None:
    stream = b"data: " + b"x" * 11 + b"\n\ndata: 0123456789\n\ndata: 01234\ndata: 56789\n\n"
    decoded = decode([stream], limit=10)
    assert [type(e) for e in decoded] == [OversizedLine, bytes, OversizedLine]
    assert decoded[1] == b"0123456789"


def test_a_huge_event_fed_in_pieces_is_never_held() -> None:
    decoder = SseDecoder(1000)
    assert decoder.feed(b"data: ") == []
    for _ in range(100):
        assert decoder.feed(b"z" * 65536) == []
    assert decoder._data == []
    assert decoder._lines._pending == []
    events = decoder.feed(b"\n\ndata: ok\n\n")
    assert isinstance(events[0], OversizedLine)
    assert events[1:] == [SseEvent(b"ok")]


def test_a_last_event_without_its_blank_line_still_counts() -> None:
    assert decode([b"data: last"]) == [b"last"]
