from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from gemwire.protocol.framing import LineBuffer, OversizedLine


def frame(chunks: list[bytes], limit: int = 1 << 20) -> list[bytes | OversizedLine]:
    buffer = LineBuffer(limit)
    out = [item for chunk in chunks for item in buffer.feed(chunk)]
    return out + buffer.close()


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


def test_lf_crlf_and_a_last_line_without_newline() -> None:
    assert frame([b"a\nb\r\nc"]) == [b"a", b"b", b"c"]
    assert frame([b"a\n\n"]) == [b"a", b""]
    assert frame([b""]) == []


def test_a_lone_carriage_return_inside_a_line_is_kept() -> None:
    assert frame([b"a\rb\n"]) == [b"a\rb"]


def test_oversized_lines_are_skipped_and_the_stream_goes_on() -> None:
    data = b"ok\n" + b"x" * 100 + b"\nafter\n" + b"y" * 50
    assert frame([data], limit=10) == [
        b"ok",
        OversizedLine(size=100, limit=10),
        b"after",
        OversizedLine(size=50, limit=10),
    ]


def test_a_line_exactly_at_the_limit_passes() -> None:
    assert frame([b"x" * 10 + b"\n"], limit=10) == [b"x" * 10]
    assert frame([b"x" * 11 + b"\n"], limit=10) == [OversizedLine(size=11, limit=10)]


def test_memory_stays_bounded_for_a_huge_line_fed_in_pieces() -> None:
    buffer = LineBuffer(1000)
    chunk = b"z" * 65536
    for _ in range(200):  # 13 MB in one line
        assert buffer.feed(chunk) == []
        assert buffer._pending == []
    assert buffer.feed(b"\nnext\n") == [OversizedLine(size=200 * 65536, limit=1000), b"next"]


def test_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        LineBuffer(0)


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.binary(max_size=40).filter(lambda b: b"\n" not in b), max_size=12),
    crlf=st.booleans(),
    cuts=st.lists(st.integers(min_value=0, max_value=600), max_size=12),
    limit=st.integers(min_value=1, max_value=48),
)
def test_any_chunking_yields_the_same_lines(
    lines: list[bytes], crlf: bool, cuts: list[int], limit: int
) -> None:
    data = b"".join(line + (b"\r\n" if crlf else b"\n") for line in lines)
    whole = frame([data], limit)
    assert frame(split_at(data, cuts), limit) == whole
    expected: list[bytes | OversizedLine] = []
    for line in lines:
        raw = line + (b"\r" if crlf else b"")
        if len(raw) > limit:
            expected.append(OversizedLine(size=len(raw), limit=limit))
        else:
            expected.append(raw[:-1] if raw.endswith(b"\r") else raw)
    assert whole == expected
