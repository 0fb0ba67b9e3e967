"""Server-Sent Events, sans-IO: one JSON-RPC message an event, both ways.

An event's ``data`` is the message as it is (a JSON message has no newline of its own;
one it has anyway is whitespace, and goes out as one more ``data:`` line, which the
reader joins back with a newline). Comments (``: keep-alive``) and other fields are
skipped. The data of one event is capped like a line (`DEFAULT_MAX_LINE_BYTES`): a
longer event is counted and dropped, an `OversizedLine`, never held whole.

    >>> encode_event(b'{"id":1}')
    b'data: {"id":1}\\n\\n'
    >>> decoder = SseDecoder()
    >>> decoder.feed(b': keep-alive\\n\\ndata: {"id":1}\\n') + decoder.feed(b'\\ndata: x\\ndata: y\\n\\n')
    [b'{"id":1}', b'x\\ny']
"""

from __future__ import annotations

from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES, LineBuffer, OversizedLine

__all__ = ("KEEP_ALIVE", "SseDecoder", "encode_event")

KEEP_ALIVE = b": keep-alive\n\n"


def encode_event(message: bytes) -> bytes:
    """One message as an SSE event."""
    if b"\n" in message or b"\r" in message:  # rare: a message with raw whitespace lines
        lines = message.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        return b"".join(b"data: " + line + b"\n" for line in lines) + b"\n"
    return b"data: " + message + b"\n\n"


class SseDecoder:
    """Bytes of an event stream in any chunking -> the data of each event."""

    def __init__(self, max_event_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._lines = LineBuffer(max_event_bytes + len(b"data: "))
        self._limit = max_event_bytes
        self._data: list[bytes] = []
        self._size = 0
        self._oversized = False

    def feed(self, chunk: bytes) -> list[bytes | OversizedLine]:
        return self._events(self._lines.feed(chunk))

    def close(self) -> list[bytes | OversizedLine]:
        """End of stream: an event without its blank line is still an event."""
        return self._events([*self._lines.close(), b""])

    def _events(self, lines: list[bytes | OversizedLine]) -> list[bytes | OversizedLine]:
        out: list[bytes | OversizedLine] = []
        for line in lines:
            if isinstance(line, OversizedLine):
                self._oversized = True
                self._size += line.size
            elif not line:
                if self._oversized:
                    out.append(OversizedLine(size=self._size, limit=self._limit))
                elif self._data:
                    out.append(b"\n".join(self._data))
                self._data, self._size, self._oversized = [], 0, False
            elif line.startswith(b"data:"):
                value = line[6:] if line.startswith(b"data: ") else line[5:]
                self._size += len(value) + bool(self._data)
                if self._size > self._limit:
                    self._oversized = True
                    self._data = []
                elif not self._oversized:
                    self._data.append(value)
        return out
