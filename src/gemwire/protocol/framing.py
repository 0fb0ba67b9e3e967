"""Newline framing, sans-IO: bytes in any chunking -> complete lines.

A line longer than ``max_line_bytes`` is never buffered whole: its bytes are counted and
dropped up to its newline and it comes out as an `OversizedLine`, so memory stays bounded
by the cap however long the line is, and the lines after it still come through.
"""

from __future__ import annotations

import msgspec

__all__ = ("DEFAULT_MAX_LINE_BYTES", "LineBuffer", "OversizedLine")

DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
"""Generous: Gemini prints whole tool outputs on one line (a 300 KB shell output is one line)."""


class OversizedLine(msgspec.Struct, frozen=True, kw_only=True):
    """A line that was skipped because it was longer than the limit."""

    size: int
    """Its length in bytes, without the line terminator."""
    limit: int


class LineBuffer:
    """Splits a byte stream into lines (LF or CRLF; the terminator is removed).

    >>> buffer = LineBuffer()
    >>> buffer.feed(b'{"a": 1}\\r\\n{"b"')
    [b'{"a": 1}']
    >>> buffer.feed(b": 2}\\n")
    [b'{"b": 2}']
    >>> buffer.close()
    []
    """

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be at least 1")
        self.max_line_bytes = max_line_bytes
        self._pending = bytearray()
        self._skipped: int | None = None  # bytes of an oversized line dropped so far

    def feed(self, data: bytes) -> list[bytes | OversizedLine]:
        out: list[bytes | OversizedLine] = []
        limit = self.max_line_bytes
        start = 0
        while (newline := data.find(b"\n", start)) != -1:
            if self._skipped is not None:
                out.append(OversizedLine(size=self._skipped + newline - start, limit=limit))
                self._skipped = None
            elif len(self._pending) + newline - start > limit:
                out.append(OversizedLine(size=len(self._pending) + newline - start, limit=limit))
                self._pending.clear()
            elif self._pending:
                self._pending += data[start:newline]
                out.append(_strip_cr(bytes(self._pending)))
                self._pending.clear()
            else:
                out.append(_strip_cr(data[start:newline]))
            start = newline + 1
        rest = len(data) - start
        if self._skipped is not None:
            self._skipped += rest
        elif len(self._pending) + rest > limit:
            self._skipped = len(self._pending) + rest
            self._pending.clear()
        elif rest:
            self._pending += data[start:]
        return out

    def close(self) -> list[bytes | OversizedLine]:
        """End of stream: a last line without a newline is still a line."""
        out: list[bytes | OversizedLine] = []
        if self._skipped is not None:
            out.append(OversizedLine(size=self._skipped, limit=self.max_line_bytes))
        elif self._pending:
            out.append(_strip_cr(bytes(self._pending)))
        self._pending.clear()
        self._skipped = None
        return out


def _strip_cr(line: bytes) -> bytes:
    return line[:-1] if line.endswith(b"\r") else line
