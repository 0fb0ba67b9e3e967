from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from kit.corpus import RECORDINGS
from msgspec import UNSET

from gemwire.errors import MalformedMessageError
from gemwire.protocol.framing import OversizedLine
from gemwire.protocol.gemini import (
    GeminiStreamDecoder,
    InvalidUtf8,
    MalformedLine,
    NoiseLine,
    UnknownWireEvent,
)
from gemwire.wire.gemini_stream import (
    ErrorEvent,
    InitEvent,
    MessageEvent,
    ResultEvent,
    StreamStats,
    ToolError,
    ToolResultEvent,
)

STREAMS = sorted(RECORDINGS.glob("*/*/stream-json/run-*.stdout"))

# Printed by Gemini CLI 0.61.0 against the scripted model (tests/fixtures/gemini).
INIT = b'{"type":"init","timestamp":"2026-11-22T09:25:45.687Z","session_id":"d1a603a4-5514-4326-935b-69d8babaf7f1","model":"auto"}'
DELTA = b'{"type":"message","timestamp":"2026-11-22T09:25:45.700Z","role":"assistant","content":"caf\xc3\xa9 \xe2\x9c\x93","delta":true}'


def decode(data: bytes, *, strict: bool = False, limit: int | None = None) -> list[object]:
    decoder = GeminiStreamDecoder(strict=strict, **({"max_line_bytes": limit} if limit else {}))
    return [*decoder.feed(data), *decoder.close()]


def test_known_events_decode_to_exact_wire_types() -> None:
    assert decode(INIT + b"\n" + DELTA) == [
        InitEvent(
            timestamp="2026-11-22T09:25:45.687Z",
            session_id="d1a603a4-5514-4326-935b-69d8babaf7f1",
            model="auto",
        ),
        MessageEvent(
            timestamp="2026-11-22T09:25:45.700Z", role="assistant", content="café ✓", delta=True
        ),
    ]


def test_absent_optional_fields_stay_absent() -> None:
    (result,) = decode(
        b'{"type":"result","timestamp":"t","status":"success","stats":{"total_tokens":3,"input_tokens":2,'
        b'"output_tokens":1,"duration_ms":5,"tool_calls":0}}'
    )
    assert result == ResultEvent(
        timestamp="t",
        status="success",
        stats=StreamStats(
            total_tokens=3, input_tokens=2, output_tokens=1, duration_ms=5, tool_calls=0
        ),
    )
    assert isinstance(result, ResultEvent)
    assert result.error is UNSET  # absent, which is not null


def test_a_banner_before_init_and_slash_command_text_are_noise() -> None:
    data = b"Loaded cached credentials.\n" + INIT + b"\nMemory is currently empty.\n"
    assert decode(data) == [
        NoiseLine(text="Loaded cached credentials."),
        decode(INIT)[0],
        NoiseLine(text="Memory is currently empty."),
    ]
    assert decode(data, strict=True)[1] == decode(INIT)[0]  # noise is real CLI output


def test_unknown_types_and_wrong_shapes_are_kept_raw() -> None:
    unknown = b'{"type":"telemetry","timestamp":"t","x":1}'
    no_type = b'{"hello":"world"}'
    wrong = b'{"type":"init","timestamp":"t","session_id":5,"model":"auto"}'
    cut = b'{"type":"message","timestamp":"t","ro'
    items = decode(b"\n".join([unknown, no_type, wrong, b"[1,2]", cut]))
    assert items == [
        UnknownWireEvent(type="telemetry", line=unknown.decode()),
        UnknownWireEvent(type=None, line=no_type.decode()),
        MalformedLine(
            type="init", line=wrong.decode(), reason="Expected `str`, got `int` - at `$.session_id`"
        ),
        MalformedLine(type=None, line="[1,2]", reason="not a JSON object"),
        MalformedLine(
            type=None, line=cut.decode(), reason="not valid JSON: Input data was truncated"
        ),
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b'{"type":"telemetry","timestamp":"t"}', "line 1: unknown event type 'telemetry'"),
        (
            b'{"type":"init","timestamp":"t","session_id":"s","model":"m","extra":1}',
            "line 1: unknown field(s) $.extra",
        ),
        (
            (
                b'{"type":"result","timestamp":"t","status":"success","stats":{"total_tokens":1,'
                b'"input_tokens":1,"output_tokens":0,"duration_ms":1,"tool_calls":0,"models":{"m":'
                b'{"total_tokens":1,"input_tokens":1,"output_tokens":0,"cached":0,"input":1,"thoughts":0}}}}'
            ),
            "line 1: unknown field(s) $.stats.models.m.thoughts",
        ),
        (b'{"type":"init","timestamp":"t"}', "line 1: Object missing required field `session_id`"),
        (b"\xff" + INIT, "line 1: 1 invalid UTF-8 byte(s)"),
    ],
)
def test_strict_mode_raises_with_the_line_number(line: bytes, message: str) -> None:
    with pytest.raises(MalformedMessageError) as caught:
        decode(line, strict=True)
    assert str(caught.value) == message
    assert caught.value.lineno == 1


def test_invalid_utf8_is_replaced_counted_and_the_line_still_decodes() -> None:
    line = DELTA.replace(b"caf\xc3\xa9", b"caf\xc3")  # a truncated two-byte character
    assert decode(line) == [
        InvalidUtf8(count=1),
        MessageEvent(
            timestamp="2026-11-22T09:25:45.700Z",
            role="assistant",
            content="caf\ufffd ✓",
            delta=True,
        ),
    ]
    assert decode(b"\xfe\xffbanner\n") == [
        InvalidUtf8(count=2),
        NoiseLine(text="\ufffd\ufffdbanner"),
    ]
    # A U+FFFD that was really there is not counted as a replacement.
    assert decode("ok \ufffd \xff".encode("utf-8", "surrogateescape")[:-2] + b"\xff") == [
        InvalidUtf8(count=1),
        NoiseLine(text="ok \ufffd \ufffd"),
    ]


def test_a_multibyte_character_split_across_chunks() -> None:
    decoder = GeminiStreamDecoder(strict=True)
    cut = DELTA.index(b"\xe2") + 1
    assert decoder.feed(DELTA[:cut]) == []
    assert decoder.feed(DELTA[cut:] + b"\n") == decode(DELTA)


def test_oversized_lines_are_records_and_strict_refuses_them() -> None:
    data = INIT + b"\n" + b'{"type":"message"' + b" " * 500 + b"}\n" + INIT
    assert decode(data, limit=200) == [
        decode(INIT)[0],
        OversizedLine(size=518, limit=200),
        decode(INIT)[0],
    ]
    with pytest.raises(
        MalformedMessageError, match="line 2: line of 518 bytes is over the 200-byte limit"
    ):
        decode(data, strict=True, limit=200)


def test_error_and_tool_result_shapes() -> None:
    items = decode(
        b'{"type":"error","timestamp":"t","severity":"warning","message":"Loop detected, stopping execution"}\n'
        b'{"type":"tool_result","timestamp":"t","tool_id":"x","status":"error","output":"o",'
        b'"error":{"type":"tool_not_registered","message":"m"}}'
    )
    assert items == [
        ErrorEvent(timestamp="t", severity="warning", message="Loop detected, stopping execution"),
        ToolResultEvent(
            timestamp="t",
            tool_id="x",
            status="error",
            output="o",
            error=ToolError(type="tool_not_registered", message="m"),
        ),
    ]


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: "/".join(p.parts[-4:-2]) + "/" + p.name)
def test_every_recorded_stream_decodes_in_strict_mode(path: Path) -> None:
    items = decode(path.read_bytes(), strict=True)
    assert not any(
        isinstance(i, UnknownWireEvent | MalformedLine | InvalidUtf8 | OversizedLine) for i in items
    )


def test_the_corpus_is_large_enough_to_mean_something() -> None:
    assert len(STREAMS) >= 45


def test_one_odd_line_in_a_chunk_of_events_is_told_apart_from_them() -> None:
    # A chunk of well-formed events is decoded in one go; one line that is not sends every
    # line of the chunk through the line-by-line path, with the same result as feeding each.
    init, delta = decode(INIT)[0], decode(DELTA)[0]
    decoder = GeminiStreamDecoder(max_line_bytes=200)
    assert decoder.feed(b"\n".join([INIT, DELTA, DELTA]) + b"\n") == [init, delta, delta]
    assert decoder.lineno == 3
    oversized = b'{"type":"message","content":"' + b"x" * 300 + b'"}'
    for odd in (b"noise", b"", b" " + INIT, b"{}{}", oversized, b"\xff" + INIT):
        lines = [INIT, DELTA, odd, DELTA]
        decoder = GeminiStreamDecoder(max_line_bytes=200)
        one_by_one = [item for line in lines for item in decoder.feed(line + b"\n")]
        assert one_by_one[:2] == [init, delta]
        assert one_by_one[-1] == delta
        decoder = GeminiStreamDecoder(max_line_bytes=200)
        assert decoder.feed(b"\n".join(lines) + b"\n") == one_by_one
        assert decoder.lineno == 4


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "lenient"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    index=st.integers(min_value=0, max_value=len(STREAMS) - 1),
    cuts=st.lists(st.integers(min_value=0, max_value=4000), max_size=20),
)
def test_any_chunking_of_any_fixture_decodes_the_same(
    strict: bool, index: int, cuts: list[int]
) -> None:
    data = STREAMS[index].read_bytes()
    decoder = GeminiStreamDecoder(strict=strict)
    points = sorted({min(c, len(data)) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    items = [item for chunk in chunks for item in decoder.feed(chunk)] + decoder.close()
    line_by_line = GeminiStreamDecoder(strict=strict)
    *lines, last = data.split(b"\n")
    expected = [item for line in lines for item in line_by_line.feed(line + b"\n")]
    expected += line_by_line.feed(last) + line_by_line.close()
    assert items == expected == decode(data, strict=strict)
    assert decoder.lineno == line_by_line.lineno


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_raise_in_lenient_mode(data: bytes) -> None:
    decode(data, limit=64)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_raise_only_gemwire_errors_in_strict_mode(data: bytes) -> None:
    with contextlib.suppress(MalformedMessageError):
        decode(data, strict=True, limit=64)
