"""httpx transports for `gemwire.remote` against the server's app in the test's loop.

`StreamingASGITransport` answers as the app sends (httpx's own ASGI transport waits for
the whole body, so an SSE stream that follows live would never return). `DroppingTransport`
wraps it and cuts chosen event streams mid-message, as a network would: the seam through
which the tests drop a stream, with nothing patched.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
from anyio.abc import TaskGroup
from starlette.types import ASGIApp, Message


class _Body(httpx.AsyncByteStream):
    def __init__(
        self, chunks: anyio.abc.ObjectReceiveStream[bytes], disconnected: anyio.Event
    ) -> None:
        self._chunks = chunks
        self._disconnected = disconnected

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        try:
            return await self._chunks.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        self._disconnected.set()  # the app sees http.disconnect, as from a closed socket
        await self._chunks.aclose()


class StreamingASGITransport(httpx.AsyncBaseTransport):
    """Each request runs ``app`` in a task of ``tg``; the response comes at its start."""

    def __init__(self, app: ASGIApp, tg: TaskGroup) -> None:
        self.app = app
        self.tg = tg
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        body = await request.aread()
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": request.method,
            "scheme": request.url.scheme,
            "path": request.url.path,
            "raw_path": request.url.raw_path.split(b"?")[0],
            "root_path": "",
            "query_string": request.url.query,
            "headers": [(k.lower(), v) for k, v in request.headers.raw],
            "client": ("127.0.0.1", 5000),
            "server": (request.url.host, request.url.port),
        }
        started = anyio.Event()
        disconnected = anyio.Event()
        head: dict[str, Any] = {}
        send_chunk, receive_chunk = anyio.create_memory_object_stream[bytes](math.inf)
        sent_body = False

        async def receive() -> Message:
            nonlocal sent_body
            if not sent_body:
                sent_body = True
                return {"type": "http.request", "body": body, "more_body": False}
            await disconnected.wait()
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            if message["type"] == "http.response.start":
                head.update(message)
                started.set()
            elif message["type"] == "http.response.body":
                if message.get("body") and not disconnected.is_set():
                    send_chunk.send_nowait(message["body"])  # else: gone, as a closed socket
                if not message.get("more_body", False):
                    send_chunk.close()

        async def run() -> None:
            try:
                await self.app(scope, receive, send)
            finally:
                send_chunk.close()
                started.set()

        self.tg.start_soon(run)
        await started.wait()
        if "status" not in head:
            raise httpx.RemoteProtocolError("the app sent no response", request=request)
        return httpx.Response(
            head["status"],
            headers=head.get("headers", []),
            stream=_Body(receive_chunk, disconnected),
            request=request,
        )


class _Cut(httpx.AsyncByteStream):
    """``inner`` up to ``keep`` envelopes (SSE messages of event ``gemwire``; comments
    pass) and half of the next one; then `httpx.ReadError`."""

    def __init__(self, inner: httpx.AsyncByteStream, keep: int, request: httpx.Request) -> None:
        self._inner = inner
        self._remaining = keep
        self._request = request
        self._cut = False

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        if self._cut:
            raise httpx.ReadError("connection reset (injected)", request=self._request)
        chunk = await anext(aiter(self._inner))
        start = 0
        while (end := chunk.find(b"\n\n", start)) >= 0:
            if b"event: gemwire" in chunk[start:end]:
                if self._remaining == 0:
                    self._cut = True
                    return chunk[: start + (end - start) // 2]
                self._remaining -= 1
            start = end + 2
        return chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class DroppingTransport(httpx.AsyncBaseTransport):
    """``inner``, but the event streams (``GET .../events``) numbered in ``cuts`` (0: the
    first one opened) are cut after the given count of SSE messages; every other request,
    and each stream's reopening, passes as it is. ``refuse`` event streams after the
    cuts fail to connect at all (a server gone for good)."""

    def __init__(
        self, inner: httpx.AsyncBaseTransport, cuts: dict[int, int], *, refuse: int = 0
    ) -> None:
        self.inner = inner
        self.cuts = cuts
        self.refuse = refuse
        self.streams: list[str] = []
        """The query of each event stream opened (``after=N``), in order."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not request.url.path.endswith("/events") or request.method != "GET":
            return await self.inner.handle_async_request(request)
        number = len(self.streams)
        self.streams.append(request.url.query.decode())
        if number >= max(self.cuts, default=-1) + 1 and self.refuse > 0:
            self.refuse -= 1
            raise httpx.ConnectError("connection refused (injected)", request=request)
        response = await self.inner.handle_async_request(request)
        if number not in self.cuts:
            return response
        assert isinstance(response.stream, httpx.AsyncByteStream)
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_Cut(response.stream, self.cuts[number], request),
            request=request,
        )
