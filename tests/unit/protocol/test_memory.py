from __future__ import annotations

import tracemalloc

from gemwire.protocol.framing import OversizedLine
from gemwire.protocol.gemini import GeminiStreamDecoder
from gemwire.wire.gemini_stream import InitEvent

MiB = 1 << 20
INIT = b'{"type":"init","timestamp":"t","session_id":"s","model":"auto"}'


def test_a_100_mb_line_is_skipped_and_memory_stays_bounded_by_the_cap() -> None:
    cap = 64 * MiB
    decoder = GeminiStreamDecoder(max_line_bytes=cap)
    head = b'{"type":"message","timestamp":"t","role":"assistant","content":"'
    tracemalloc.start()
    try:
        items = decoder.feed(INIT + b"\n" + head)
        for _ in range(100):
            items += decoder.feed(b"a" * MiB)  # a fresh object per read, as from a pipe
        items += decoder.feed(b'","delta":true}\n' + INIT + b"\n")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    init = InitEvent(timestamp="t", session_id="s", model="auto")
    size = len(head) + 100 * MiB + len(b'","delta":true}')
    assert items == [init, OversizedLine(size=size, limit=cap), init]
    # The line is buffered up to the cap, then only counted: the peak is the cap, not
    # 100 MB (measured: 64.0 MiB).
    assert peak < cap + 4 * MiB
