"""Server-Sent Events, sans-IO: `encode_event` out, `SseDecoder` in (the WHATWG
event-stream format), for ACP's JSON-RPC over Streamable HTTP and for ``gemwire serve``'s
session streams alike.

An event's ``data`` is the message as it is (a JSON message has no newline of its own;
one it has anyway is whitespace, and goes out as one more ``data:`` line, which the
reader joins back with a newline). A line ends at CR LF, LF or CR, and nowhere else: not
at the other characters Python's ``str.splitlines`` breaks at (U+0085, U+2028, ...), which
JSON leaves unescaped. Comments (``: keep-alive``) and fields other than ``data`` and
``event`` are skipped. The data of one event is capped like a line
(`DEFAULT_MAX_LINE_BYTES`): a longer event is counted and dropped, an `OversizedLine`,
never held whole.

    >>> encode_event(b'{"id":1}')
    b'data: {"id":1}\\n\\n'
    >>> decoder = SseDecoder()
    >>> decoder.feed(b': keep-alive\\n\\ndata: {"id":1}\\n') + decoder.feed(b'\\ndata: x\\rdata: y\\r\\n\\r\\n')
    [SseEvent(data=b'{"id":1}', event='message'), SseEvent(data=b'x\\ny', event='message')]
    >>> decoder.feed(b'id: 7\\nevent: gemwire\\ndata: {"seq": 7}\\n\\n')
    [SseEvent(data=b'{"seq": 7}', event='gemwire')]
"""

from __future__ import annotations

import msgspec

from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES, LineBuffer, OversizedLine

__all__ = ("KEEP_ALIVE", "SseDecoder", "SseEvent", "encode_event")

KEEP_ALIVE = b": keep-alive\n\n"


class SseEvent(msgspec.Struct, frozen=True):
    """One dispatched event: ``event`` is ``message`` unless the stream named it."""

    data: bytes
    event: str = "message"


def encode_event(message: bytes) -> bytes:
    """One message as an SSE event."""
    if b"\n" in message or b"\r" in message:  # rare: a message with raw whitespace lines
        lines = message.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        return b"".join(b"data: " + line + b"\n" for line in lines) + b"\n"
    return b"data: " + message + b"\n\n"


class SseDecoder:
    """Bytes of an event stream in any chunking -> its events, each event's data at most
    ``max_event_bytes`` (else an `OversizedLine` in its place)."""

    def __init__(self, max_event_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._lines = LineBuffer(max_event_bytes + len(b"data: "))
        self._limit = max_event_bytes
        self._data: list[bytes] = []
        self._event = ""
        self._size = 0
        self._oversized = False
        self._after_cr = False

    def feed(self, chunk: bytes) -> list[SseEvent | OversizedLine]:
        if self._after_cr and chunk[:1] == b"\n":
            chunk = chunk[1:]  # the LF of a CR LF cut in two
        if not chunk:
            return []
        self._after_cr = chunk[-1:] == b"\r"
        if b"\r" in chunk:  # a line may end at a lone CR: LineBuffer cuts at LF only
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        return self._events(self._lines.feed(chunk))

    def close(self) -> list[SseEvent | OversizedLine]:
        """End of stream: an event without its blank line is still an event."""
        return self._events([*self._lines.close(), b""])

    def _events(self, lines: list[bytes | OversizedLine]) -> list[SseEvent | OversizedLine]:
        out: list[SseEvent | OversizedLine] = []
        for line in lines:
            if isinstance(line, OversizedLine):
                self._oversized = True
                self._size += line.size
            elif not line:
                if self._oversized:
                    out.append(OversizedLine(size=self._size, limit=self._limit))
                elif self._data:
                    out.append(SseEvent(b"\n".join(self._data), self._event or "message"))
                self._data, self._event, self._size, self._oversized = [], "", 0, False
            elif line == b"data" or line.startswith(b"data:"):
                value = line[6:] if line.startswith(b"data: ") else line[5:]
                self._size += len(value) + bool(self._data)
                if self._size > self._limit:
                    self._oversized = True
                    self._data = []
                elif not self._oversized:
                    self._data.append(value)
            elif line == b"event" or line.startswith(b"event:"):
                value = line[7:] if line.startswith(b"event: ") else line[6:]
                self._event = value.decode("utf-8", "replace")
        return out
