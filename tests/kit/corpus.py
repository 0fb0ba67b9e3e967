"""Where the recorded corpus lives (tests/fixtures, see its README) and the one way tests
run a recorded stream: decoded, then normalized.

``from kit.corpus import RECORDINGS, normalize_stream`` (tests/ is on ``sys.path`` through
tests/conftest.py, pytest's rootdir-based import).
"""

from __future__ import annotations

from pathlib import Path

from gemwire._normalize.gemini import GeminiNormalizer
from gemwire.events import Event
from gemwire.protocol.gemini import GeminiStreamDecoder

__all__ = (
    "AGENT_GOLDEN",
    "CASES",
    "FIXTURES",
    "GOLDEN",
    "RECORDED",
    "RECORDINGS",
    "normalize_stream",
)

TESTS = Path(__file__).resolve().parents[1]
FIXTURES = TESTS / "fixtures"
RECORDINGS = FIXTURES / "gemini"
"""``<version>/<case>/``: the real Gemini CLIs' recorded runs and session files."""
RECORDED = RECORDINGS / "0.61.0"
"""The current pinned CLI's recordings."""
CASES = FIXTURES / "cases"
"""The scenarios the recordings were made from."""
AGENT_GOLDEN = FIXTURES / "acp"
"""``<agent>/<case>.jsonl``: the ACP agents' recorded normalized events."""
GOLDEN = TESTS / "golden" / "gemini"
"""The normalized events of every recorded stream-json run."""


def normalize_stream(
    data: bytes,
    *,
    cwd: str | None = None,
    strict: bool = False,
    max_line_bytes: int | None = None,
    exit_code: int | None = None,
) -> list[Event]:
    """The events a whole stream-json stdout normalizes to, end of stream included."""
    decoder = (
        GeminiStreamDecoder(strict=strict)
        if max_line_bytes is None
        else GeminiStreamDecoder(strict=strict, max_line_bytes=max_line_bytes)
    )
    normalizer = GeminiNormalizer(cwd=cwd)
    items = decoder.feed(data) + decoder.close()
    return [event for item in items for event in normalizer.feed(item)] + normalizer.finish(
        exit_code=exit_code
    )
