"""Server-Sent Events, sans-IO: lines in, messages out (the WHATWG event-stream format).

>>> parser = SseParser()
>>> lines = [": keep-alive", "", "id: 7", "event: gemwire", 'data: {"seq": 7}', ""]
>>> [message for line in lines if (message := parser.feed(line)) is not None]
[SseMessage(id='7', event='gemwire', data='{"seq": 7}')]
"""

from __future__ import annotations

import msgspec

__all__ = ("SseMessage", "SseParser")


class SseMessage(msgspec.Struct, frozen=True):
    """One dispatched message: ``event`` is ``message`` unless the stream named it."""

    id: str | None
    event: str
    data: str


class SseParser:
    """Feed it the stream's lines (without their line ends); a blank line dispatches what
    came before it. Comments and unknown fields are ignored, as the format says."""

    __slots__ = ("_data", "_event", "_id")

    def __init__(self) -> None:
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None

    def feed(self, line: str) -> SseMessage | None:
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
