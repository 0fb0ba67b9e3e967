"""Gemini stream-json decoding, sans-IO: bytes in any chunking -> wire events and records.

Nothing the CLI prints stops the stream. Besides wire events, the decoder yields records:

- `NoiseLine`: a line that is not JSON (slash-command output, banners, debug text);
- `UnknownWireEvent`: a JSON object with a ``type`` this version does not know;
- `MalformedLine`: JSON of a known ``type`` in a shape that does not fit, broken JSON
  (a line cut short by a crash), or JSON nested too deeply to decode;
- `OversizedLine`: a line over the size cap, skipped;
- `InvalidUtf8`: a line held bytes that are not UTF-8; they were replaced by U+FFFD and
  the line decoded anyway (this record comes right before it);
- `LoneSurrogates`: an event's JSON held half of a UTF-16 surrogate pair (``"\\ud83d"``,
  Gemini CLI cutting an emoji in two), read as U+FFFD (this record comes right before it).

With ``strict=True`` (the tests) unknown types, unknown fields, malformed lines and
invalid UTF-8 raise `MalformedMessageError` instead; noise lines and lone surrogates are
still allowed, since the real CLI writes them.

    >>> decoder = GeminiStreamDecoder()
    >>> decoder.feed(b'{"type":"init","timestamp":"t","session_id":"s","model":"auto"}\\nhello\\n')
    [InitEvent(timestamp='t', session_id='s', model='auto'), NoiseLine(text='hello')]
"""

from __future__ import annotations

from typing import cast

import msgspec

from gemwire.errors import MalformedMessageError
from gemwire.protocol._lone_surrogates import LoneSurrogates, repaired
from gemwire.protocol._strict import unknown_fields
from gemwire.protocol._undecodable import UNDECODABLE, decode_replacing, why_undecodable
from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES, LineBuffer, OversizedLine
from gemwire.wire.gemini_stream import JsonStreamEvent

__all__ = (
    "DecodedItem",
    "GeminiStreamDecoder",
    "InvalidUtf8",
    "LoneSurrogates",
    "MalformedLine",
    "NoiseLine",
    "OversizedLine",
    "UnknownWireEvent",
)


class NoiseLine(msgspec.Struct, frozen=True, kw_only=True):
    text: str


class UnknownWireEvent(msgspec.Struct, frozen=True, kw_only=True):
    type: str | None
    """The ``type`` value, or ``None`` for a JSON object without a string ``type``."""
    line: str


class MalformedLine(msgspec.Struct, frozen=True, kw_only=True):
    type: str | None
    line: str
    reason: str


class InvalidUtf8(msgspec.Struct, frozen=True, kw_only=True):
    count: int
    """How many replacement characters the next line gained."""


DecodedItem = (
    JsonStreamEvent
    | NoiseLine
    | UnknownWireEvent
    | MalformedLine
    | OversizedLine
    | InvalidUtf8
    | LoneSurrogates
)

_KNOWN_TYPES = frozenset(t.__struct_config__.tag for t in JsonStreamEvent.__args__)
_typed: msgspec.json.Decoder[JsonStreamEvent] = msgspec.json.Decoder(JsonStreamEvent)
_untyped = msgspec.json.Decoder()


class GeminiStreamDecoder:
    """Decodes Gemini CLI ``--output-format stream-json`` output.

    Args:
        strict: raise `MalformedMessageError` on anything that is not exactly the known
            protocol (noise lines excepted) instead of yielding a record.
        max_line_bytes: lines longer than this are skipped (`OversizedLine`).
    """

    def __init__(
        self, *, strict: bool = False, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    ) -> None:
        self.strict = strict
        self._lines = LineBuffer(max_line_bytes)
        self.lineno = 0
        """Lines framed so far (blank and oversized lines included)."""

    def feed(self, data: bytes) -> list[DecodedItem]:
        lines = self._lines.feed(data)
        if not self.strict:
            # The common case first: every line a well-formed event, decoded in one C loop.
            # A line that is not (or an OversizedLine: a TypeError) sends the whole chunk
            # through _decode_all, which says what each line is.
            try:
                events: list[DecodedItem] = list(map(_typed.decode, cast("list[bytes]", lines)))
            except (*UNDECODABLE, TypeError):
                pass
            else:
                self.lineno += len(lines)
                return events
        return self._decode_all(lines)

    def close(self) -> list[DecodedItem]:
        """End of stream: decodes a last line that had no newline."""
        return self._decode_all(self._lines.close())

    def _decode_all(self, lines: list[bytes | OversizedLine]) -> list[DecodedItem]:
        out: list[DecodedItem] = []
        fast = not self.strict
        for line in lines:
            self.lineno += 1
            # The common case, inlined: a well-formed event line in lenient mode.
            if fast and line.__class__ is bytes and line[:1] == b"{":
                try:
                    out.append(_typed.decode(line))
                    continue
                except UNDECODABLE:
                    pass  # _decode below says what is wrong
            if isinstance(line, OversizedLine):
                if self.strict:
                    raise MalformedMessageError(
                        f"line of {line.size} bytes is over the {line.limit}-byte limit",
                        lineno=self.lineno,
                    )
                out.append(line)
            elif line and not line.isspace():
                self._decode(line, out)
        return out

    def _decode(self, line: bytes, out: list[DecodedItem]) -> None:
        if line[:1] == b"{" and self._event(line, out):
            return
        try:
            text = line.decode()
        except UnicodeDecodeError:
            text, count = decode_replacing(line)
            if self.strict:
                raise MalformedMessageError(
                    f"{count} invalid UTF-8 byte(s)", line=text, lineno=self.lineno
                ) from None
            out.append(InvalidUtf8(count=count))
            # It may still be an event, now that it decodes.
            if text.startswith("{") and self._event(text.encode(), out):
                return
        out.append(self._classify(text))

    def _event(self, line: bytes, out: list[DecodedItem]) -> bool:
        """Whether ``line`` is a known event, as it is or with its lone surrogates replaced
        (`LoneSurrogates` then comes first); if so, it is in ``out``."""
        try:
            event = _typed.decode(line)
        except UNDECODABLE:
            fixed = repaired(line)
            if fixed is None:
                return False  # the slow path says what is wrong
            line, count = fixed
            try:
                event = _typed.decode(line)
            except UNDECODABLE:
                return False
            out.append(LoneSurrogates(count=count))
        if self.strict:
            self._check_fields(line)
        out.append(event)
        return True

    def _classify(self, text: str) -> DecodedItem:
        """A line that did not decode as a known event: say what it is."""
        try:
            document = _untyped.decode(text)
        except RecursionError as exc:
            return self._malformed(None, text, why_undecodable(exc))
        except msgspec.DecodeError as exc:
            if not text.lstrip().startswith("{"):
                return NoiseLine(text=text)
            return self._malformed(None, text, f"not valid JSON: {exc}")
        if not isinstance(document, dict):
            return self._malformed(None, text, "not a JSON object")
        kind = document.get("type")
        kind = kind if isinstance(kind, str) else None
        if kind not in _KNOWN_TYPES:
            if self.strict:
                raise MalformedMessageError(
                    f"unknown event type {kind!r}", line=text, lineno=self.lineno
                )
            return UnknownWireEvent(type=kind, line=text)
        try:
            event = _typed.decode(text)
        except msgspec.ValidationError as exc:
            return self._malformed(kind, text, str(exc))
        if self.strict:  # a valid event with leading whitespace; rare, but it is one
            self._check_fields(text.encode())
        return event

    def _malformed(self, kind: str | None, text: str, reason: str) -> MalformedLine:
        if self.strict:
            raise MalformedMessageError(reason, line=text, lineno=self.lineno)
        return MalformedLine(type=kind, line=text, reason=reason)

    def _check_fields(self, line: bytes) -> None:
        text = line.decode(errors="replace")
        try:  # the typed decode skipped unknown fields unread: one may not decode at all
            document = _untyped.decode(line)
        except UNDECODABLE as exc:
            raise MalformedMessageError(
                why_undecodable(exc), line=text, lineno=self.lineno
            ) from exc
        extra = unknown_fields(document, JsonStreamEvent)
        if extra:
            raise MalformedMessageError(
                f"unknown field(s) {', '.join(extra)}", line=text, lineno=self.lineno
            )
