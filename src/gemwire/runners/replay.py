"""Normalize Gemini stream-json output that was already captured: a file, a pipe, a log.

>>> from gemwire import replay_gemini_stream
>>> lines = [b'{"type":"init","timestamp":"t","session_id":"s","model":"auto"}\\n']
>>> [event.type for event in replay_gemini_stream(lines)]  # no result: the turn failed
['session_started', 'turn_completed']
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from gemwire._normalize.gemini import GeminiNormalizer
from gemwire.events import Event, TurnCompleted
from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES
from gemwire.protocol.gemini import GeminiStreamDecoder

__all__ = ("replay_gemini_stream",)


def replay_gemini_stream(
    chunks: Iterable[bytes],
    *,
    cwd: str | None = None,
    exit_code: int | None = None,
    strict: bool = False,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> Iterator[Event]:
    """Events for ``gemini --output-format stream-json`` output, as it arrives.

    ``chunks`` may be split anywhere (a file read in blocks, a pipe). Ends with exactly
    one ``turn_completed``. ``cwd`` resolves the relative paths the model used;
    ``exit_code``, if the process's is known, names the failure when no ``result`` came.
    ``strict`` raises `MalformedMessageError` for anything outside the known protocol.
    """
    decoder = GeminiStreamDecoder(strict=strict, max_line_bytes=max_line_bytes)
    normalizer = GeminiNormalizer(cwd=cwd)
    # Lines after ``result`` (a notice, noise) still come out, before the turn ends.
    held: list[Event] = []
    for chunk in chunks:
        for item in decoder.feed(chunk):
            yield from _hold_turn_end(normalizer.feed(item), held)
    for item in decoder.close():
        yield from _hold_turn_end(normalizer.feed(item), held)
    yield from normalizer.finish(exit_code=exit_code)
    yield from held


def _hold_turn_end(events: list[Event], held: list[Event]) -> list[Event]:
    """The events to yield now; a `TurnCompleted` among them goes into ``held``."""
    for index, event in enumerate(events):
        if isinstance(event, TurnCompleted):
            held.append(event)
            return events[:index] + events[index + 1 :]
    return events
