"""Gemini CLI ``--output-format json`` decoding, sans-IO.

The CLI prints one pretty-printed document at the very end: on stdout when the run got
that far, on **stderr** for fatal errors (0.61.0), where it sits among other lines and may
come twice, the second copy prefixed with ``[ERROR] `` (docs/gemini-cli.md#json-output).
`JsonOutputDecoder` collects stdout; `ErrorDocumentScanner` picks documents out of stderr
lines. Neither raises on bad input unless ``strict``: they say what they found instead. A
document that holds lone surrogates (see `gemwire.protocol._lone_surrogates`) comes as a
`RepairedOutput`.

    >>> decoder = JsonOutputDecoder()
    >>> decoder.feed(b'{\\n  "session_id": "s1",\\n  "response": "Hi"\\n}')
    >>> decoder.close()
    JsonOutput(session_id='s1', response='Hi', stats=UNSET, error=UNSET, warnings=UNSET)
    >>> scanner = ErrorDocumentScanner()
    >>> [scanner.feed_line(line) for line in ['noise', '{', '  "session_id": "s2"', '}']]
    [None, None, None, JsonOutput(session_id='s2', response=UNSET, stats=UNSET, error=UNSET, warnings=UNSET)]
"""

from __future__ import annotations

import msgspec

from gemwire.errors import MalformedMessageError
from gemwire.protocol._lone_surrogates import LoneSurrogates, repaired
from gemwire.protocol._strict import unknown_fields
from gemwire.protocol._undecodable import UNDECODABLE, why_undecodable
from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES, OversizedLine
from gemwire.protocol.gemini import MalformedLine
from gemwire.wire.gemini_json import JsonOutput

__all__ = ("ErrorDocumentScanner", "JsonOutputDecoder", "RepairedOutput", "decode_json_output")

_typed = msgspec.json.Decoder(JsonOutput)
_untyped = msgspec.json.Decoder()

_ERROR_PREFIX = "[ERROR] "
_MAX_DOCUMENT_LINES = 10_000
"""An error document is a few lines; a block without its closing brace ends here."""


class RepairedOutput(msgspec.Struct, frozen=True, kw_only=True):
    """A document that decoded once its lone surrogates were replaced by U+FFFD."""

    document: JsonOutput
    repair: LoneSurrogates


def decode_json_output(
    data: bytes | str, *, strict: bool = False
) -> JsonOutput | RepairedOutput | MalformedLine:
    """One json-format document; with ``strict``, unknown fields raise too."""
    try:
        output = _typed.decode(data)
    except UNDECODABLE as exc:
        fixed = repaired(data.encode() if isinstance(data, str) else data)
        if fixed is not None:
            try:
                output = _typed.decode(fixed[0])
            except UNDECODABLE:
                pass  # not a document either way: say why the original is not
            else:
                if strict:
                    _check_fields(fixed[0])
                return RepairedOutput(document=output, repair=LoneSurrogates(count=fixed[1]))
        text = data if isinstance(data, str) else data.decode(errors="replace")
        reason = why_undecodable(exc)
        if strict:
            raise MalformedMessageError(f"not a json-format document: {reason}", line=text) from exc
        return MalformedLine(type=None, line=text, reason=reason)
    if strict:
        _check_fields(data)
    return output


def _check_fields(data: bytes | str) -> None:
    text = data if isinstance(data, str) else data.decode(errors="replace")
    try:  # the typed decode skipped unknown fields unread: one may not decode at all
        document = _untyped.decode(data)
    except UNDECODABLE as exc:
        raise MalformedMessageError(why_undecodable(exc), line=text) from exc
    extra = unknown_fields(document, JsonOutput)
    if extra:
        raise MalformedMessageError(f"unknown field(s) {', '.join(extra)}", line=text)


class JsonOutputDecoder:
    """Collects a run's stdout and decodes it, whole, at the end.

    Args:
        strict: raise `MalformedMessageError` instead of returning a `MalformedLine`.
        max_bytes: a larger output is dropped (`OversizedLine`) rather than held.
    """

    def __init__(self, *, strict: bool = False, max_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self.strict = strict
        self._max = max_bytes
        self._chunks: list[bytes] = []
        self._size = 0

    def feed(self, data: bytes) -> None:
        self._size += len(data)
        if self._size <= self._max:
            self._chunks.append(data)
        else:
            self._chunks.clear()

    def close(self) -> JsonOutput | RepairedOutput | MalformedLine | OversizedLine | None:
        """The document; ``None`` when stdout was empty (fatal errors go to stderr)."""
        if self._size > self._max:
            if self.strict:
                raise MalformedMessageError(
                    f"output of {self._size} bytes is over the {self._max}-byte limit"
                )
            return OversizedLine(size=self._size, limit=self._max)
        data = b"".join(self._chunks).strip()
        self._chunks.clear()
        return decode_json_output(data, strict=self.strict) if data else None


class ErrorDocumentScanner:
    """Finds the json-format documents a fatal error prints among stderr lines.

    A document starts with a line ``{`` (or ``[ERROR] {``) and ends with the next line
    ``}``: ``JSON.stringify(output, null, 2)`` puts nothing else at column 0.
    """

    def __init__(self) -> None:
        self._block: list[str] | None = None

    def feed_line(self, line: str) -> JsonOutput | RepairedOutput | None:
        """Feed one stderr line (no newline); returns a document when one is complete."""
        if self._block is None:
            if line.removeprefix(_ERROR_PREFIX) == "{":
                self._block = ["{"]
            return None
        self._block.append(line)
        if line != "}" and len(self._block) < _MAX_DOCUMENT_LINES:
            return None
        document, self._block = "\n".join(self._block), None
        output = decode_json_output(document)
        return None if isinstance(output, MalformedLine) else output
