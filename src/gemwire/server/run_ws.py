"""hypercorn's WebSocket stream, with two closes as the ASGI spec and the endpoints need them.

hypercorn 0.18's `WSStream` (both paths: HTTP/1.1 wsproto, and h2's RFC 8441 streams):

- answers a client's Close but tells the app ``websocket.disconnect`` with 1006 (or 1000),
  never the client's code: a client that closes with 1009 (a frame over its cap) reaches
  the app as an abnormal closure. `CloseAsSent` keeps the client's code and reason and gives
  them to the app, as the ASGI spec (and uvicorn) does;
- closes a message over ``websocket_max_message_size`` with 1009 and no reason, keeps
  buffering the rest of that message, and tells the app nothing until the client's Close
  (then 1006). `CloseAsSent` closes it with 1009 and the reason the ACP endpoint gives for
  its own cap (``the message is too big``), drops the rest of the message unread into
  memory, and tells the app at once (``websocket.disconnect``, 1009), so that the endpoint
  stops the connection's agent; what the app sends after is dropped, as after a client's
  close, and the stream ends once the client answered the Close (or went).

hypercorn makes its streams in `hypercorn.protocol.h11` and `hypercorn.protocol.h2` by the
module name `WSStream`: `install` points both at `CloseAsSent` (pinned ``hypercorn<0.19``, the
version this was written against; `install` checks the class it replaces is that one).
"""

from __future__ import annotations

from typing import Any

from hypercorn.protocol import h2 as hyper_h2, h11 as hyper_h11
from hypercorn.protocol.events import Event, StreamClosed
from hypercorn.protocol.ws_stream import FrameTooLargeError, WSStream
from wsproto.connection import ConnectionState
from wsproto.events import CloseConnection, Message, Ping

__all__ = ("TOO_BIG", "TOO_BIG_REASON", "CloseAsSent", "install")

TOO_BIG = 1009
TOO_BIG_REASON = "the message is too big"


class CloseAsSent(WSStream):
    """hypercorn's `WSStream`, telling the app the client's close code, and a message over
    the cap as the close it is."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._client_close: tuple[int, str] | None = None
        self._refused = False
        """A message went over the cap: the app was told the socket closed."""

    async def handle(self, event: Event) -> None:
        if isinstance(event, StreamClosed) and not self.closed and self.app_put is not None:
            told = (TOO_BIG, TOO_BIG_REASON) if self._refused else self._client_close
            if told is not None:
                self.closed = True
                if not self._refused:  # else the app was told when the message went over
                    code, reason = told
                    await self.app_put(
                        {"type": "websocket.disconnect", "code": code, "reason": reason}
                    )
                return
        await super().handle(event)

    async def app_send(self, message: Any) -> None:
        if self._refused and not self.closed:
            # The app was told the socket closed; what it sends now goes nowhere. Its end
            # (None) waits for the client's answer to the Close (StreamClosed then), so
            # that the connection is not closed on a client still sending the message.
            return
        await super().app_send(message)

    async def _handle_events(self) -> None:
        for event in self.connection.events():
            if isinstance(event, Message):
                if self._refused:
                    continue
                try:
                    self.buffer.extend(event)
                except FrameTooLargeError:
                    await self._refuse()
                    continue
                if event.message_finished:
                    assert self.app_put is not None
                    await self.app_put(self.buffer.to_message())
                    self.buffer.clear()
            elif isinstance(event, Ping):
                await self._send_wsproto_event(event.response())
            elif isinstance(event, CloseConnection):
                self._client_close = (event.code, event.reason or "")
                if self.connection.state == ConnectionState.REMOTE_CLOSING:
                    await self._send_wsproto_event(event.response())
                await self.send(StreamClosed(stream_id=self.stream_id))

    async def _refuse(self) -> None:
        self.buffer.clear()
        self._refused = True
        await self._send_wsproto_event(CloseConnection(code=TOO_BIG, reason=TOO_BIG_REASON))
        assert self.app_put is not None
        await self.app_put(
            {"type": "websocket.disconnect", "code": TOO_BIG, "reason": TOO_BIG_REASON}
        )


def install() -> None:
    """Make hypercorn's HTTP/1.1 and HTTP/2 protocols open `CloseAsSent` streams."""
    for module in (hyper_h11, hyper_h2):
        made = getattr(module, "WSStream")  # noqa: B009 - a module's global, replaced below
        if made is not CloseAsSent:
            assert made is WSStream, f"{module.__name__}.WSStream is not hypercorn's"
            setattr(module, "WSStream", CloseAsSent)  # noqa: B010
