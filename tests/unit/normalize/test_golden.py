"""Every recorded stream-json run normalizes to exactly its golden events."""

from __future__ import annotations

from pathlib import Path

import pytest

from gemwire._normalize.gemini import GeminiNormalizer
from gemwire.events import Event, encode_event
from gemwire.protocol.gemini import GeminiStreamDecoder

TESTS = Path(__file__).resolve().parents[2]
RECORDINGS = TESTS / "fixtures" / "gemini"
GOLDEN = TESTS / "golden" / "gemini"
STREAMS = sorted(RECORDINGS.glob("*/*/stream-json/run-*.stdout"))


def normalize(data: bytes) -> list[Event]:
    # The recordings name the workspace __WORKSPACE__; so do the golden paths.
    decoder, normalizer = GeminiStreamDecoder(strict=True), GeminiNormalizer(cwd="__WORKSPACE__")
    items = decoder.feed(data) + decoder.close()
    return [event for item in items for event in normalizer.feed(item)] + normalizer.finish()


def golden_path(stream: Path) -> Path:
    version, case = stream.parts[-4], stream.parts[-3]
    return GOLDEN / version / case / stream.name.replace(".stdout", ".events.jsonl")


@pytest.mark.parametrize("stream", STREAMS, ids=lambda p: f"{p.parts[-4]}/{p.parts[-3]}/{p.stem}")
def test_stream_normalizes_to_its_golden_events(stream: Path, update_golden: bool) -> None:
    actual = b"".join(encode_event(e) for e in normalize(stream.read_bytes()))
    golden = golden_path(stream)
    if update_golden:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_bytes(actual)
    assert actual.decode() == golden.read_text()


def test_every_golden_file_has_a_recording() -> None:
    expected = {golden_path(s) for s in STREAMS}
    assert set(GOLDEN.rglob("*.events.jsonl")) == expected
