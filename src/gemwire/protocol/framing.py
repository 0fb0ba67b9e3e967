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
        # The start of an unfinished line, in pieces: joined once when it ends.
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._skipped: int | None = None  # bytes of an oversized line dropped so far

    def feed(self, data: bytes) -> list[bytes | OversizedLine]:
        out: list[bytes | OversizedLine] = []
        if self._pending or self._skipped is not None:
            # Finish the line that earlier chunks started, then split the rest in bulk.
            newline = data.find(b"\n")
            if newline == -1:
                self._hold(data)
                return out
            self._hold(data[:newline])
            out.extend(self.close())
            data = data[newline + 1 :]
        lines: list[bytes] = data.split(b"\n")
        self._hold(lines.pop())
        if not lines:
            return out
        limit = self.max_line_bytes
        if len(data) > limit and max(map(len, lines)) > limit:
            out.extend(
                OversizedLine(size=len(line), limit=limit) if len(line) > limit else _strip_cr(line)
                for line in lines
            )
        elif b"\r" in data:
            out.extend(_strip_cr(line) for line in lines)
        else:
            out.extend(lines)
        return out

    def _hold(self, part: bytes) -> None:
        """Keep the start of an unfinished line, or only count it once it is too long."""
        if self._skipped is not None:
            self._skipped += len(part)
        elif self._pending_size + len(part) > self.max_line_bytes:
            self._skipped = self._pending_size + len(part)
            self._pending.clear()
            self._pending_size = 0
        elif part:
            self._pending.append(part)
            self._pending_size += len(part)

    def close(self) -> list[bytes | OversizedLine]:
        """End of stream: a last line without a newline is still a line."""
        out: list[bytes | OversizedLine] = []
        if self._skipped is not None:
            out.append(OversizedLine(size=self._skipped, limit=self.max_line_bytes))
        elif self._pending:
            out.append(_strip_cr(b"".join(self._pending)))
        self._pending.clear()
        self._pending_size = 0
        self._skipped = None
        return out


def _strip_cr(line: bytes) -> bytes:
    return line[:-1] if line.endswith(b"\r") else line
