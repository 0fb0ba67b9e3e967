"""Normalize Gemini output that was already captured: a file, a pipe, a log.

>>> from gemwire import replay_gemini_stream
>>> lines = [b'{"type":"init","timestamp":"t","session_id":"s","model":"auto"}\\n']
>>> [event.type for event in replay_gemini_stream(lines)]  # no result: the turn failed
['session_started', 'turn_completed']
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator

from gemwire._normalize.gemini import GeminiNormalizer
from gemwire._normalize.gemini_json import GeminiJsonNormalizer
from gemwire._normalize.notices import notice
from gemwire.errors import MalformedMessageError
from gemwire.events import Event, TurnCompleted, TurnError
from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES
from gemwire.protocol.gemini import GeminiStreamDecoder
from gemwire.protocol.gemini_json import JsonOutputDecoder

__all__ = ("replay_gemini_batches", "replay_gemini_stream")

_JSON_DOCUMENT_NOTICE = (
    "this is a json-format document (gemini --output-format json), not stream-json: "
    "read as one document"
)
_SNIFF_BYTES = 1 << 16


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
    one ``turn_completed``, after every other event. ``cwd`` resolves the relative paths
    the model used; ``exit_code``, if the process's is known, names the failure when no
    ``result`` came. ``strict`` raises `MalformedMessageError` for anything outside the
    known protocol. A ``--output-format json`` document (its first line is a lone ``{``,
    which no stream-json output has) is read as one, after a ``notice`` saying so. Binary
    data (a NUL byte in the first line) is a failed turn of kind ``protocol`` saying how
    many bytes it was.

    >>> [event.error.message for event in replay_gemini_stream([b"\\x7fELF\\x02\\0\\0"])]
    ['not stream-json: 7 bytes of binary data']
    """
    for events in replay_gemini_batches(
        chunks, cwd=cwd, exit_code=exit_code, strict=strict, max_line_bytes=max_line_bytes
    ):
        yield from events


def replay_gemini_batches(
    chunks: Iterable[bytes],
    *,
    cwd: str | None = None,
    exit_code: int | None = None,
    strict: bool = False,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> Iterator[list[Event]]:
    """`replay_gemini_stream`'s events in batches, one per chunk that made any, for a
    consumer that handles events by the thousand (``gemwire replay --json`` writes each
    batch at once). No batch is empty; the last one ends with the ``turn_completed``."""
    head, rest = _first_line(iter(chunks))
    if b"\0" in head:  # no JSON text holds a NUL byte: an executable, an image, an archive
        yield _binary(len(head) + sum(len(chunk) for chunk in rest), exit_code, strict)
        return
    chunks = itertools.chain([head], rest)
    if head.lstrip().split(b"\n", 1)[0].strip() == b"{":
        yield list(_replay_json_document(chunks, exit_code, strict, max_line_bytes))
        return
    decoder = GeminiStreamDecoder(strict=strict, max_line_bytes=max_line_bytes)
    normalizer = GeminiNormalizer(cwd=cwd)
    # Lines after ``result`` (a notice, noise) still come out, before the turn ends.
    held: list[Event] = []
    for chunk in chunks:
        events = normalizer.feed_all(decoder.feed(chunk))
        if normalizer.completed and not held:
            events = _hold_turn_end(events, held)
        if events:
            yield events
    events = normalizer.feed_all(decoder.close())
    if normalizer.completed and not held:
        events = _hold_turn_end(events, held)
    yield events + normalizer.finish(exit_code=exit_code) + held


def _first_line(chunks: Iterator[bytes]) -> tuple[bytes, Iterator[bytes]]:
    """The first chunks, joined, up to a line with content (or 64 KiB): enough to tell
    the format without waiting on a live pipe longer than its first line."""
    head = b""
    for chunk in chunks:
        head += chunk
        if b"\n" in head.lstrip() or len(head) >= _SNIFF_BYTES:
            break
    return head, chunks


def _binary(size: int, exit_code: int | None, strict: bool) -> list[Event]:
    """The turn of input that is binary data: failed, saying so in one line (read line by
    line as text, it made thousands of notices of escaped bytes)."""
    message = f"not stream-json: {size:,} bytes of binary data"
    if strict:
        raise MalformedMessageError(message)
    stopped = TurnError(kind="protocol", message=message)
    return GeminiNormalizer().finish(exit_code=exit_code, stopped=stopped)


def _replay_json_document(
    chunks: Iterable[bytes], exit_code: int | None, strict: bool, max_bytes: int
) -> Iterator[Event]:
    decoder = JsonOutputDecoder(strict=strict, max_bytes=max_bytes)
    for chunk in chunks:
        decoder.feed(chunk)
    normalizer = GeminiJsonNormalizer()
    events = normalizer.finish(decoder.close(), exit_code=exit_code)
    yield notice("gemini", None, _JSON_DOCUMENT_NOTICE, severity="info")
    yield from events


def _hold_turn_end(events: list[Event], held: list[Event]) -> list[Event]:
    """The events to yield now; a `TurnCompleted` among them goes into ``held``."""
    for index, event in enumerate(events):
        if isinstance(event, TurnCompleted):
            held.append(event)
            return events[:index] + events[index + 1 :]
    return events
