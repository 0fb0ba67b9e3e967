"""Throughput of gemwire's stream-json decode + normalize against bare decoders, one run.

    .venv/bin/python bench/decode_normalize.py [--mb 50] [--repeat 3]

The input is every stream-json stdout recorded from Gemini CLI 0.61.0 in
tests/fixtures/gemini, concatenated and repeated up to the size asked for. Each contender
gets the same bytes; the best of ``--repeat`` runs counts. Ratios are against bare msgspec
typed decoding measured in the same run, two ways: of the lines split beforehand (only
msgspec's decoding is timed; the strict baseline) and of the same bytes split with
bytes.splitlines inside the timing (what any consumer of a byte stream has to do).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from gemwire._normalize.gemini import GeminiNormalizer
from gemwire.protocol.gemini import GeminiStreamDecoder
from gemwire.wire.gemini_stream import JsonStreamEvent

RECORDINGS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "gemini" / "0.61.0"
CHUNK = 1 << 16  # what a pipe read returns


def corpus(megabytes: float) -> bytes:
    one = b"".join(p.read_bytes() for p in sorted(RECORDINGS.glob("*/stream-json/run-*.stdout")))
    return one * max(1, int(megabytes * 1e6 / len(one)))


def bare_msgspec(lines: list[bytes]) -> int:
    decode = msgspec.json.Decoder(JsonStreamEvent).decode
    return sum(1 for line in lines if decode(line))


def bare_msgspec_with_split(data: bytes) -> int:
    decode = msgspec.json.Decoder(JsonStreamEvent).decode
    return sum(1 for line in data.splitlines() if line and decode(line))


def bare_json(lines: list[bytes]) -> int:
    return sum(1 for line in lines if json.loads(line))


def gemwire_decode(data: bytes) -> int:
    decoder = GeminiStreamDecoder()
    count = 0
    for start in range(0, len(data), CHUNK):
        count += len(decoder.feed(data[start : start + CHUNK]))
    return count + len(decoder.close())


def gemwire_decode_normalize(data: bytes) -> int:
    decoder, normalizer = GeminiStreamDecoder(), GeminiNormalizer()
    count = 0
    for start in range(0, len(data), CHUNK):
        for item in decoder.feed(data[start : start + CHUNK]):
            count += len(normalizer.feed(item))
    for item in decoder.close():
        count += len(normalizer.feed(item))
    return count + len(normalizer.finish())


def best(fn: Callable[[Any], int], data: Any, repeat: int) -> tuple[float, int]:
    times, result = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn(data)
        times.append(time.perf_counter() - started)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    data = corpus(args.mb)
    split = [line for line in data.splitlines() if line]
    lines = len(split)
    print(
        f"input: {len(data) / 1e6:.1f} MB, {lines} lines (recorded Gemini CLI 0.61.0 stream-json)"
    )
    rows: list[tuple[str, Callable[[Any], int], Any]] = [
        ("msgspec typed decode, lines pre-split", bare_msgspec, split),
        ("msgspec typed decode + splitlines", bare_msgspec_with_split, data),
        ("json.loads, lines pre-split", bare_json, split),
        ("gemwire decode (framing + typed decode)", gemwire_decode, data),
        ("gemwire decode + normalize", gemwire_decode_normalize, data),
    ]
    # Interleaved rounds, best of each, so drift on a shared machine hits all alike.
    timings: dict[str, float] = {}
    produced: dict[str, int] = {}
    for _ in range(args.repeat):
        for name, fn, given in rows:
            seconds, produced[name] = best(fn, given, 1)
            timings[name] = min(seconds, timings.get(name, seconds))
    strict, usual = timings[rows[0][0]], timings[rows[1][0]]
    print(
        f"{'contender':42} {'MB/s':>8} {'lines/s':>11} {'items':>6} {'vs pre-split':>13} {'vs +split':>10}"
    )
    for name, _, _ in rows:
        seconds = timings[name]
        print(
            f"{name:42} {len(data) / 1e6 / seconds:8.1f} {lines / seconds:11,.0f} {produced[name]:6} "
            f"{strict / seconds:12.2f}x {usual / seconds:9.2f}x"
        )


if __name__ == "__main__":
    main()
