"""Server-Sent Events, sans-IO: bytes in (any chunking), messages out (the WHATWG
event-stream format).

A line ends at CR LF, LF or CR, and nowhere else: not at the other characters Python's
``str.splitlines`` breaks at (U+0085, U+2028, ...), which JSON leaves unescaped in a
``data`` line.

>>> parser = SseParser()
>>> parser.feed(b': keep-alive\\n\\nid: 7\\nevent: gemwire\\ndata: {"seq"')
[]
>>> parser.feed(b': 7}\\r\\n\\r\\n')
[SseMessage(id='7', event='gemwire', data='{"seq": 7}')]
"""

from __future__ import annotations

import re

import msgspec

__all__ = ("SseMessage", "SseParser")

_LINE_END = re.compile(rb"\r\n|\r|\n")


class SseMessage(msgspec.Struct, frozen=True):
    """One dispatched message: ``event`` is ``message`` unless the stream named it."""

    id: str | None
    event: str
    data: str


class SseParser:
    """Feed it the stream's bytes; a blank line dispatches what came before it. Comments
    and unknown fields are ignored, as the format says."""

    __slots__ = ("_after_cr", "_data", "_event", "_id", "_pieces")

    def __init__(self) -> None:
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._pieces: list[bytes] = []
        """The line begun and not ended yet."""
        self._after_cr = False

    def feed(self, chunk: bytes) -> list[SseMessage]:
        """The messages ``chunk`` completes."""
        if self._after_cr and chunk[:1] == b"\n":
            chunk = chunk[1:]  # the LF of a CR LF cut in two
        if not chunk:
            return []
        self._after_cr = chunk[-1:] == b"\r"
        parts = _LINE_END.split(chunk)
        if len(parts) == 1:
            self._pieces.append(chunk)
            return []
        parts[0] = b"".join([*self._pieces, parts[0]])
        self._pieces = [parts[-1]] if parts[-1] else []
        messages = []
        for raw in parts[:-1]:
            message = self.line(raw.decode("utf-8", "replace"))
            if message is not None:
                messages.append(message)
        return messages

    def line(self, line: str) -> SseMessage | None:
        """One line, without its line end; the message it dispatches, if any."""
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        return None

    def _dispatch(self) -> SseMessage | None:
        data, event = self._data, self._event
        self._data, self._event = [], ""
        if not data:
            return None
        return SseMessage(id=self._id, event=event or "message", data="\n".join(data))
