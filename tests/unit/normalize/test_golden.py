"""Every recorded stream-json run normalizes to exactly its golden events."""

from __future__ import annotations

from pathlib import Path

import pytest
from kit.corpus import GOLDEN, RECORDINGS, normalize_stream

from gemwire.events import encode_event

STREAMS = sorted(RECORDINGS.glob("*/*/stream-json/run-*.stdout"))


def golden_path(stream: Path) -> Path:
    version, case = stream.parts[-4], stream.parts[-3]
    return GOLDEN / version / case / stream.name.replace(".stdout", ".events.jsonl")


@pytest.mark.parametrize("stream", STREAMS, ids=lambda p: f"{p.parts[-4]}/{p.parts[-3]}/{p.stem}")
def test_stream_normalizes_to_its_golden_events(stream: Path, update_golden: bool) -> None:
    # The recordings name the workspace __WORKSPACE__; so do the golden paths.
    events = normalize_stream(stream.read_bytes(), cwd="__WORKSPACE__", strict=True)
    actual = b"".join(encode_event(e) for e in events)
    golden = golden_path(stream)
    if update_golden:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_bytes(actual)
    assert actual.decode() == golden.read_text()


def test_every_golden_file_has_a_recording() -> None:
    expected = {golden_path(s) for s in STREAMS}
    assert set(GOLDEN.rglob("*.events.jsonl")) == expected
