"""A remote ACP agent over one WebSocket, as the transport RFD has it (``ws://…/acp/<agent>``).

Each JSON-RPC message is one text frame, both ways; the server's ``Acp-Connection-Id``
comes on the upgrade's answer. The socket is httpx-ws on httpx (the ``remote`` extra:
anyio, so asyncio and trio alike). A frame over the line cap
(`DEFAULT_MAX_LINE_BYTES`, 64 MiB) is refused both ways: one to be sent raises
`PromptTooLarge`, one arriving closes the socket (1009) before it is held whole.

    async with AcpClient(AcpOptions(), channel=WebSocketChannel(url, token=token)) as client:
        ...

Opening raises `AgentNotFound` when the endpoint cannot be reached or has no such agent,
`AuthFailed` when it refuses the token. Once open, the end of the socket is the end of
the agent: `close_reason` says why (the close frame's reason and code, or the network).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, Self

import anyio

from gemwire.errors import PromptTooLarge
from gemwire.protocol.acp.remote import CONNECTION_ID_HEADER
from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES
from gemwire.runners.acp._remote import (
    CONNECT_TIMEOUT,
    bearer,
    import_remote,
    refused,
    unreachable,
)
from gemwire.runners.acp.channel import Framing

__all__ = ("WebSocketChannel",)

_TOO_BIG = 1009
_READ_CHUNK = 256 * 1024


class WebSocketChannel:
    """The agent behind ``url`` (``ws://`` or ``wss://``), over one WebSocket; ``token``
    goes as ``Authorization: Bearer``."""

    framing: Framing = "messages"

    def __init__(
        self, url: str, *, token: str | None = None, max_message_bytes: int = DEFAULT_MAX_LINE_BYTES
    ) -> None:
        self.url = url
        self._token = token
        self._max = max_message_bytes
        self._stack = contextlib.AsyncExitStack()
        self._reason: str | None = None
        self._ended = anyio.Event()
        self._closing = False
        self.connection_id: str | None = None
        """The server's ``Acp-Connection-Id`` for this socket, once open."""

    @property
    def stderr_tail(self) -> str | None:
        return None

    @property
    def exit_code(self) -> int | None:
        return None

    @property
    def close_reason(self) -> str | None:
        return self._reason

    async def __aenter__(self) -> Self:
        httpx, httpx_ws = import_remote()
        import wsproto.events
        import wsproto.utilities

        self._events = wsproto.events
        # What sending can raise once the socket is gone (its end shows in `receive`).
        self._gone = (httpx_ws.HTTPXWSException, wsproto.utilities.LocalProtocolError, OSError)
        self._disconnect = httpx_ws.WebSocketDisconnect
        self._lost = httpx_ws.WebSocketNetworkError
        url = _http_url(self.url)
        stack = self._stack
        client = await stack.enter_async_context(
            httpx.AsyncClient(timeout=httpx.Timeout(CONNECT_TIMEOUT, read=None))
        )
        capped = _capped_session(httpx_ws, self._max)
        try:
            self._ws = await stack.enter_async_context(
                httpx_ws.aconnect_ws(
                    url,
                    client,
                    headers=bearer(self._token),
                    max_message_size_bytes=_READ_CHUNK,
                    session_class=capped,
                )
            )
        except httpx_ws.WebSocketUpgradeError as exc:
            await stack.aclose()  # httpx-ws closed the answer unread: its status is what is left
            raise refused(self.url, exc.response.status_code, "") from exc
        except (httpx.HTTPError, httpx_ws.HTTPXWSException, OSError) as exc:
            await stack.aclose()
            raise unreachable(self.url, exc) from exc
        except BaseException:
            await stack.aclose()
            raise
        response = self._ws.response
        self.connection_id = response.headers.get(CONNECTION_ID_HEADER) if response else None
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._ended.set()
        await self._stack.aclose()

    async def send(self, data: bytes) -> None:
        message = data[:-1] if data.endswith(b"\n") else data
        if len(message) > self._max:
            raise PromptTooLarge(
                f"a message of {len(message)} bytes is over the {self._max} a remote agent takes"
            )
        if self._ended.is_set():
            return  # the agent is gone: receive says so
        with contextlib.suppress(*self._gone, anyio.BrokenResourceError):
            await self._ws.send_text(message.decode(errors="replace"))

    async def receive(self) -> bytes:
        events = self._events
        while not self._ended.is_set():
            try:
                event = await self._ws.receive()
            except self._disconnect as exc:
                self._end(_said(exc.code, exc.reason))
                if self._ws.connection.too_big:  # we closed: tell the server why
                    with contextlib.suppress(*self._gone):
                        await self._ws.close(_TOO_BIG, exc.reason)
            except self._lost as exc:
                self._end(f"the connection was lost ({exc!r})")
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                self._end("the connection was lost")
            else:
                if isinstance(event, events.TextMessage) and event.data:
                    return str(event.data).encode()
                if isinstance(event, events.BytesMessage) and event.data:
                    return bytes(event.data)
        return b""

    async def close(self, grace: float) -> None:
        """Send the close frame, wait up to ``grace`` for the server's, then drop the socket."""
        if not self._ended.is_set():
            self._closing = True
            with contextlib.suppress(*self._gone):
                await self._ws.send(self._events.CloseConnection(1000, "the client closed"))
            with anyio.move_on_after(grace):
                await self._ended.wait()
        self._ended.set()
        with contextlib.suppress(*self._gone):
            await self._ws.close()

    def _end(self, reason: str) -> None:
        if not self._closing and self._reason is None:
            self._reason = reason
        self._ended.set()


def _said(code: int, reason: str | None) -> str:
    return f"{reason} (WebSocket close {code})" if reason else f"WebSocket close {code}"


def _http_url(url: str) -> str:
    """httpx speaks the upgrade over http(s); ws(s) URLs name the same place."""
    for ws, http in (("ws://", "http://"), ("wss://", "https://")):
        if url.lower().startswith(ws):
            return http + url[len(ws) :]
    return url


def _capped_session(httpx_ws: Any, limit: int) -> Any:
    """httpx-ws's session, its wsproto connection capped: a message growing past
    ``limit`` becomes a close (1009) instead of a buffer that grows with it."""
    import wsproto.events

    class _Capped:
        def __init__(self, connection: Any) -> None:
            self._connection = connection
            self._size = 0
            self.too_big = False

        def __getattr__(self, name: str) -> Any:
            return getattr(self._connection, name)

        def events(self) -> Iterator[Any]:
            for event in self._connection.events():
                if isinstance(event, wsproto.events.Message):
                    # Characters of text, not bytes: bounded all the same (at most 4x);
                    # the exact cap is the connection's line cap, on the whole message.
                    self._size += len(event.data)
                    if self._size > limit:
                        self.too_big = True
                        yield wsproto.events.CloseConnection(_TOO_BIG, "the message is too big")
                        return
                    if event.message_finished:
                        self._size = 0
                yield event

    class CappedSession(httpx_ws.AsyncWebSocketSession):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.connection: Any = _Capped(self.connection)

    return CappedSession
