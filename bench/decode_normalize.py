"""Throughput of gemwire's stream-json decode + normalize against bare decoders, one run.

    .venv/bin/python bench/decode_normalize.py [--lines 200000] [--mb 50] [--repeat 3]

Two inputs, both built from the stream-json stdout recorded from Gemini CLI 0.61.0 in
tests/fixtures/gemini:

- small events: what a long run prints. One ``init`` and the prompt, then the recorded
  runs' other small lines (text deltas, tool calls and results, errors) over and over,
  each round's tool ids made its own, then one ``result``: ``--lines`` lines.
- one big line: every recording concatenated and repeated up to ``--mb``; the 300 KB
  tool-output line of ``large_tool_output`` makes up most of its bytes.

Each contender gets the same bytes; the best CPU time of ``--repeat`` interleaved rounds
counts. Ratios are against bare msgspec typed decoding measured in the same run, two
ways: of the lines split beforehand (only msgspec's decoding is timed; the strict
baseline) and of the same bytes split with bytes.splitlines inside the timing (what any
consumer of a byte stream has to do). The last two rows are floors, not contenders: gemwire's
decoder and the one event each line becomes, built with nothing derived, then that and what a
turn must keep (its answer, its open calls). No normalizer written in Python gets past them.
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
from gemwire.events import Event, MessageDelta, Notice, ToolCallFinished, ToolCallStarted
from gemwire.protocol.gemini import GeminiStreamDecoder
from gemwire.wire.gemini_stream import JsonStreamEvent, MessageEvent, ToolResultEvent, ToolUseEvent

RECORDINGS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "gemini" / "0.61.0"
CHUNK = 1 << 16  # what a pipe read returns
SMALL_LINE = 1 << 14  # larger lines (one 300 KB tool output) stay out of the small corpus


def recordings() -> list[bytes]:
    return [p.read_bytes() for p in sorted(RECORDINGS.glob("*/stream-json/run-*.stdout"))]


def big_line_corpus(megabytes: float) -> bytes:
    one = b"".join(recordings())
    return one * max(1, int(megabytes * 1e6 / len(one)))


def small_event_corpus(lines: int) -> bytes:
    """One long run of recorded small events: ``lines`` lines, ending in a ``result``."""
    runs = [run.splitlines() for run in recordings()]
    init, prompt, *_, result = runs[0]  # the prompt: echoed as a user message
    assert init.startswith(b'{"type":"init"'), init
    assert b'"role":"user"' in prompt, prompt
    assert result.startswith(b'{"type":"result"'), result
    body = [
        line
        for run in runs
        for line in run
        if len(line) <= SMALL_LINE
        and b'"role":"user"' not in line
        and not line.startswith((b'{"type":"init"', b'{"type":"result"'))
    ]
    out = [init, prompt]
    for round_ in range((lines - 3) // len(body) + 1):
        # Tool ids are unique in a run: each round's calls get ids of their own.
        out += (line.replace(b'"tool_id":"', b'"tool_id":"%d-' % round_) for line in body)
    # A call the cut leaves open is closed at the end, as in a run that stopped early.
    return b"\n".join([*out[: lines - 1], result]) + b"\n"


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
        count += len(normalizer.feed_all(decoder.feed(data[start : start + CHUNK])))
    count += len(normalizer.feed_all(decoder.close()))
    return count + len(normalizer.finish())


def floor(data: bytes, *, with_state: bool = False) -> int:
    """What any normalizer written in Python costs at least: gemwire's decoder, then the one
    event each line becomes, built with nothing derived (no kind, title, locations or diff).
    ``with_state`` adds what a turn must keep: its answer text and its open calls."""
    decoder = GeminiStreamDecoder()
    answer: list[str] = []
    calls: dict[str, ToolCallStarted] = {}
    count = 0
    for start in range(0, len(data), CHUNK):
        events: list[Event] = []
        for item in decoder.feed(data[start : start + CHUNK]):
            if item.__class__ is MessageEvent:
                if with_state:
                    answer.append(item.content)
                events.append(MessageDelta(agent="gemini", session_id="s", text=item.content))
            elif item.__class__ is ToolUseEvent:
                started = ToolCallStarted(
                    agent="gemini",
                    session_id="s",
                    call_id=item.tool_id,
                    name=item.tool_name,
                    kind="other",
                    title=item.tool_name,
                    input=item.parameters,
                )
                if with_state:
                    calls[item.tool_id] = started
                events.append(started)
            elif item.__class__ is ToolResultEvent:
                if with_state:
                    calls.pop(item.tool_id, None)
                events.append(
                    ToolCallFinished(
                        agent="gemini", session_id="s", call_id=item.tool_id, status="completed"
                    )
                )
            else:
                events.append(
                    Notice(agent="gemini", severity="info", message="", source="upstream")
                )
        count += len(events)
    return count


def floor_with_state(data: bytes) -> int:
    return floor(data, with_state=True)


def measure(title: str, data: bytes, repeat: int) -> None:
    split = [line for line in data.splitlines() if line]
    lines = len(split)
    print(f"\n{title}: {len(data) / 1e6:.1f} MB, {lines:,} lines")
    rows: list[tuple[str, Callable[[Any], int], Any]] = [
        ("msgspec typed decode, lines pre-split", bare_msgspec, split),
        ("msgspec typed decode + splitlines", bare_msgspec_with_split, data),
        ("json.loads, lines pre-split", bare_json, split),
        ("gemwire decode (framing + typed decode)", gemwire_decode, data),
        ("gemwire decode + normalize", gemwire_decode_normalize, data),
        ("floor: decode + build the events", floor, data),
        ("floor + the turn's answer and open calls", floor_with_state, data),
    ]
    # Interleaved rounds, best of each, so drift on a shared machine hits all alike; CPU
    # time, so that other processes on the machine count less.
    timings: dict[str, float] = {}
    produced: dict[str, int] = {}
    for _ in range(repeat):
        for name, fn, given in rows:
            started = time.process_time()
            produced[name] = fn(given)
            seconds = time.process_time() - started
            timings[name] = min(seconds, timings.get(name, seconds))
    strict, usual = timings[rows[0][0]], timings[rows[1][0]]
    print(
        f"{'contender':42} {'MB/s':>8} {'lines/s':>11} {'items':>7} {'vs pre-split':>13} {'vs +split':>10}"
    )
    for name, _, _ in rows:
        seconds = timings[name]
        print(
            f"{name:42} {len(data) / 1e6 / seconds:8.1f} {lines / seconds:11,.0f} {produced[name]:7} "
            f"{strict / seconds:12.2f}x {usual / seconds:9.2f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    measure("small events", small_event_corpus(args.lines), args.repeat)
    measure("one big line", big_line_corpus(args.mb), args.repeat)


if __name__ == "__main__":
    main()
