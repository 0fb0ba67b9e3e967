"""The shared stderr reader: capped lines, capped tail, masking across the cut."""

from __future__ import annotations

import time

from hypothesis import given, settings, strategies as st

from gemwire._transport.stderr import MAX_LINE_BYTES, TAIL_LINES, StderrReader

SECRET = "AIzaSyTHISISNOTAREALKEY0123456789abcdef"


def feed_all(reader: StderrReader, data: bytes, chunk: int) -> list[str]:
    lines: list[str] = []
    for i in range(0, len(data), chunk):
        lines += reader.feed(data[i : i + chunk])
    return lines + reader.close()


def test_lines_are_split_and_masked() -> None:
    reader = StderrReader(secrets=[SECRET])
    assert feed_all(reader, f"a\nkey {SECRET} here\nlast".encode(), 3) == [
        "a",
        "key *** here",
        "last",
    ]
    assert reader.tail == "a\nkey *** here\nlast"


def test_a_secret_across_the_64_kib_cut_of_a_newline_less_line_is_masked() -> None:
    for offset in range(1, len(SECRET)):
        start = MAX_LINE_BYTES - offset  # the secret straddles the cut by `offset` bytes
        data = b"x" * start + SECRET.encode() + b"y" * 70_000
        reader = StderrReader(secrets=[SECRET])
        lines = feed_all(reader, data, 1 << 16)
        text = "".join(lines)
        assert SECRET not in text
        assert text == "x" * start + "***" + "y" * 70_000
        assert all(SECRET[:8] not in line for line in lines)
        assert all(len(line.encode()) <= MAX_LINE_BYTES for line in lines)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([b"a", b"\n", SECRET.encode(), b"AIza", b"\xff"]), max_size=60),
    st.integers(1, 50),
    st.integers(len(SECRET) + 1, 120),  # the real cap (64 KiB) is far above any secret
)
def test_no_secret_survives_any_chunking_or_cut(parts: list[bytes], chunk: int, cap: int) -> None:
    reader = StderrReader(secrets=[SECRET], max_line_bytes=cap)
    lines = feed_all(reader, b"".join(parts), chunk)
    assert not any(SECRET in line for line in lines)
    assert "".join(lines).count("***") == b"".join(parts).count(SECRET.encode())


def test_a_huge_newline_less_stream_is_linear_and_bounded() -> None:
    reader = StderrReader()
    chunk = b"z" * (1 << 16)
    started = time.monotonic()
    count = 0
    for _ in range(2048):  # 128 MiB
        count += len(reader.feed(chunk))
        assert len(reader._pending) <= MAX_LINE_BYTES
    assert time.monotonic() - started < 60  # quadratic re-splitting took minutes
    assert count == 2047
    assert len(reader.tail.splitlines()) == TAIL_LINES
