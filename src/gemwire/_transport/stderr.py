"""A child's stderr as lines: capped in length, masked, with a capped tail kept.

Both runners read their agent's stderr through `StderrReader`. A line without a newline
in sight is cut at `MAX_LINE_BYTES` (the rest comes as further lines), so a child that
writes megabytes without a newline costs bounded memory and linear time: only the
unfinished line is kept, and each chunk is searched for newlines once.

Secrets (the values of `gemwire._normalize.masking.known_secrets`) are masked in bytes
before a line is cut or decoded, and a cut never falls inside what may be the start of a
secret (the cut moves back to before it), so a secret straddling the 64 KiB boundary is
masked like any other.

    >>> reader = StderrReader(secrets=["hunter2"])
    >>> reader.feed(b"key=hunter2\\npartial")
    ['key=***']
    >>> reader.close()
    ['partial']
    >>> reader.tail
    'key=***\\npartial'
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, Iterable

from gemwire._normalize.masking import MASK

__all__ = ("MAX_LINE_BYTES", "TAIL_LINES", "TAIL_LINE_CHARS", "StderrReader")

MAX_LINE_BYTES = 1 << 16
"""A line longer than this is cut into pieces."""

TAIL_LINES = 200
TAIL_LINE_CHARS = 2000
"""The tail keeps the last `TAIL_LINES` lines, each cut at `TAIL_LINE_CHARS`."""


class StderrReader:
    """Splits stderr chunks into masked lines and keeps the last ones; see the module
    docstring."""

    def __init__(
        self,
        *,
        secrets: Iterable[str] = (),
        max_line_bytes: int = MAX_LINE_BYTES,
        tail_lines: int = TAIL_LINES,
    ) -> None:
        self._secrets = sorted({s.encode() for s in secrets if s}, key=len, reverse=True)
        self._max = max_line_bytes
        self._pending = bytearray()
        self._tail: deque[str] = deque(maxlen=tail_lines)

    @property
    def tail(self) -> str:
        """The last lines, masked, joined by newlines."""
        return "\n".join(self._tail)

    @property
    def lines(self) -> list[str]:
        """The last lines, masked."""
        return list(self._tail)

    def feed(self, data: bytes) -> list[str]:
        """The lines ``data`` completes (and pieces of over-long ones)."""
        *complete, rest = data.split(b"\n")
        raw: list[bytes] = []
        if complete:
            raw.append(bytes(self._pending) + complete[0])
            raw.extend(complete[1:])
            self._pending = bytearray(rest)
        else:
            self._pending += rest
        lines = [piece for line in raw for piece in self._pieces(self._mask(line))]
        if len(self._pending) > self._max:
            lines.extend(self._cut_pending())
        return self._keep(lines)

    def close(self) -> list[str]:
        """The unfinished last line, if any (end of stream)."""
        pending, self._pending = bytes(self._pending), bytearray()
        return self._keep(self._pieces(self._mask(pending))) if pending else []

    async def pump(
        self,
        read: Callable[[], Awaitable[bytes]],
        on_line: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        """Read chunks until end of file (``b""``), handing each line to ``on_line``."""
        while data := await read():
            for line in self.feed(data):
                if on_line is not None:
                    await on_line(line)
        for line in self.close():
            if on_line is not None:
                await on_line(line)

    def _mask(self, data: bytes) -> bytes:
        for secret in self._secrets:
            data = data.replace(secret, MASK.encode())
        return data

    def _pieces(self, line: bytes) -> list[str]:
        if len(line) <= self._max:
            return [line.decode(errors="replace")]
        return [
            line[i : i + self._max].decode(errors="replace") for i in range(0, len(line), self._max)
        ]

    def _cut_pending(self) -> list[str]:
        """Give out the unfinished line's head: all but what may start a secret."""
        data = self._mask(bytes(self._pending))
        pieces: list[str] = []
        while len(data) > self._max:
            cut = self._safe_cut(data, self._max)
            pieces.append(data[:cut].decode(errors="replace"))
            data = data[cut:]
        self._pending = bytearray(data)
        return pieces

    def _safe_cut(self, data: bytes, cut: int) -> int:
        back = 0
        for secret in self._secrets:
            # The longest proper prefix of the secret that ends right at the cut.
            for size in range(min(len(secret) - 1, cut - 1), back, -1):
                if data[cut - size : cut] == secret[:size]:
                    back = size
                    break
        return cut - back

    def _keep(self, lines: list[str]) -> list[str]:
        self._tail.extend(line[:TAIL_LINE_CHARS] for line in lines)
        return lines
