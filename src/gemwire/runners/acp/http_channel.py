"""A remote ACP agent over Streamable HTTP, as the transport RFD has it (``http://…/acp/<agent>``).

The client POSTs each of its messages. ``initialize`` opens the connection: its answer
is the body, with the ``Acp-Connection-Id`` every later request carries; the others get
``202 Accepted``. Every message scoped to a session carries ``Acp-Session-Id``: those whose
params name it, and the answers to the agent's requests that named it (a permission's).
The agent's messages come on SSE streams: the connection's (a GET opened after
``initialize``) and one per session (opened when ``session/new`` answers with it, and
before a ``session/load``, ``resume`` or ``fork`` of it is POSTed, as the RFD's resume
flow has it, so its replay comes on it), merged here into one `receive`. ``close``
DELETEs the connection: the server stops the agent. Cookies the server sets are sent back
for as long as the connection lives (the RFD requires it: a load balancer's affinity).

HTTP/2 is offered, as the RFD requires: over ``https://`` by ALPN (``h2``, else
``http/1.1``); over ``http://`` by prior knowledge (h2c: httpx does no ``Upgrade: h2c``,
and an upgrade would send each POST's body over HTTP/1.1 first). A server that does not
speak h2c breaks the connection of a first, bodiless ``OPTIONS`` (uvicorn answers the
preface with 400): then the connection is opened again over HTTP/1.1, once, and kept so.

Each SSE stream has an HTTP connection of its own; the POSTs share one. httpx's HTTP/2
client (httpcore 1.0.9) reads a connection under one lock, held across the wait for the
network, and a stream whose answer another stream's read took must take that lock to see
it: on a connection shared with a quiet SSE stream, an answer could wait for ever behind
it (docs/server.md). A connection with one stream, or with requests that are each answered
at once, has nothing to wait behind.

A request the server refuses (an HTTP error) fails alone, as the agent's error would; a
refused answer or notification is reported (a JSON-RPC error with no id, which the client
shows as a notice), and the connection goes on.

Each stream is read only as fast as the client takes messages (a small queue between),
so a slow client holds the agent back rather than filling memory; an event over the
line cap (64 MiB) is dropped unread. Opening raises `AgentNotFound` when the endpoint
cannot be reached or has no such agent, `AuthFailed` when it refuses the token. Once
open, the end of the connection's stream is the end of the agent (`close_reason`).
"""

from __future__ import annotations

import contextlib
from importlib.util import find_spec
from typing import Any, Self

import anyio
import msgspec
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from gemwire.errors import PromptTooLarge
from gemwire.protocol.acp.remote import (
    CONNECTION_ID_HEADER,
    SESSION_ID_HEADER,
    Peeked,
    attaches_session,
    peek,
)
from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES, OversizedLine
from gemwire.protocol.sse import SseDecoder, SseEvent
from gemwire.runners.acp._remote import (
    CONNECT_TIMEOUT,
    bearer,
    error_detail,
    import_remote,
    refused,
    unreachable,
)
from gemwire.runners.acp.channel import CLOSE_GRACE, MEMORY_BUFFER, Framing

__all__ = ("StreamableHttpChannel",)

_JSON = "application/json"


class StreamableHttpChannel:
    """The agent behind ``url`` (``http://`` or ``https://``), over Streamable HTTP;
    ``token`` goes as ``Authorization: Bearer``."""

    framing: Framing = "messages"

    def __init__(
        self, url: str, *, token: str | None = None, max_message_bytes: int = DEFAULT_MAX_LINE_BYTES
    ) -> None:
        self.url = url
        self._headers = bearer(token)
        self._max = max_message_bytes
        self._stack = contextlib.AsyncExitStack()
        self._reason: str | None = None
        self._closing = False
        self._ended = anyio.Event()
        self._streams: dict[str | None, anyio.Event] = {}  # open streams, set when done
        self._attaching: dict[bytes, str] = {}  # session/load requests: their session
        self._asked: dict[bytes, str] = {}  # the agent's requests on a session: its id
        self._send_inbox: MemoryObjectSendStream[bytes]
        self._inbox: MemoryObjectReceiveStream[bytes]
        self._http_version: str | None = None
        self.connection_id: str | None = None
        """The server's ``Acp-Connection-Id``, once ``initialize`` was answered."""

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
        httpx, _ = import_remote()
        self._httpx = httpx
        stack = self._stack
        self._send_inbox, self._inbox = anyio.create_memory_object_stream[bytes](MEMORY_BUFFER)
        stack.callback(self._inbox.close)
        stack.callback(self._send_inbox.close)
        self._h2c = self.url.startswith("http://") and find_spec("h2") is not None
        self._client = self._new_client()
        stack.push_async_callback(lambda: self._client.aclose())
        try:
            self._tg: TaskGroup = await stack.enter_async_context(anyio.create_task_group())
        except BaseException:
            await stack.aclose()
            raise
        stack.callback(self._tg.cancel_scope.cancel)
        return self

    def _new_client(self, cookies: Any = None) -> Any:
        """An httpx client offering HTTP/2: h2c by prior knowledge (unless the server
        turned it down), or ALPN over TLS (HTTP/1.1 alone without the h2 package)."""
        httpx = self._httpx
        timeout = httpx.Timeout(CONNECT_TIMEOUT, read=None)
        if self._h2c:
            transport = httpx.AsyncHTTPTransport(http1=False, http2=True)
            return httpx.AsyncClient(timeout=timeout, transport=transport, cookies=cookies)
        http2 = find_spec("h2") is not None
        return httpx.AsyncClient(timeout=timeout, http2=http2, cookies=cookies)

    async def _post_opening(self, message: bytes, headers: dict[str, str]) -> Any:
        """POST ``initialize``. Over h2c an ``OPTIONS`` without a body goes first: a
        server that breaks its connection does not speak h2c, and is asked over HTTP/1.1
        (one that cannot be reached is not). The probe has no body because a body cut off
        mid-write leaves httpx's request stream unfinished."""
        httpx = self._httpx
        if self._h2c:
            try:
                await self._client.request("OPTIONS", self.url, headers=self._headers)
            except (httpx.ConnectError, httpx.ConnectTimeout):
                raise
            except httpx.TransportError:
                self._h2c = False
                await self._client.aclose()
                self._client = self._new_client()
        return await self._client.post(self.url, content=message, headers=headers)

    @property
    def http_version(self) -> str | None:
        """The HTTP version the opening request was answered in (``HTTP/2``, ``HTTP/1.1``)."""
        return self._http_version

    async def __aexit__(self, *exc_info: object) -> None:
        self._end(None)
        await self._stack.aclose()

    async def send(self, data: bytes) -> None:
        message = data[:-1] if data.endswith(b"\n") else data
        if len(message) > self._max:
            raise PromptTooLarge(
                f"a message of {len(message)} bytes is over the {self._max} a remote agent takes"
            )
        if self._ended.is_set():
            return  # the agent is gone: receive says so
        seen = peek(message)
        headers = {"Content-Type": _JSON, "Accept": f"{_JSON}, text/event-stream", **self._headers}
        opening = self.connection_id is None
        if not opening:
            headers[CONNECTION_ID_HEADER] = str(self.connection_id)
        session_id = self._session_of(seen) if not opening else None
        if session_id is not None:
            assert seen is not None
            headers[SESSION_ID_HEADER] = session_id
            if seen.request and attaches_session(seen.method):
                self._attaching[seen.key or b""] = session_id
                await self._open_stream(session_id, ready=True)  # its replay comes on it
            else:
                await self._open_stream(session_id)  # if it is not (it closed, say)
        try:
            if opening:
                response = await self._post_opening(message, headers)
                self._http_version = response.http_version
            else:
                response = await self._client.post(self.url, content=message, headers=headers)
            if response.status_code == 404 and session_id is not None and _attach(seen):
                # The ACP Python SDK's server (0.12, 1.0) knows only the sessions opened on
                # the connection, and takes an attach without the header, as its client
                # sends it (a 404 reached no agent).
                del headers[SESSION_ID_HEADER]
                response = await self._client.post(self.url, content=message, headers=headers)
        except self._httpx.HTTPError as exc:
            if opening:
                raise unreachable(self.url, exc) from exc
            self._end(f"the connection was lost ({exc!r})")
            return
        if opening:
            await self._opened(response)
        elif response.status_code == 200 and response.content:
            await self._deliver(response.content)
        elif response.status_code not in (200, 202):
            what = seen.method if seen is not None and seen.method else "a message"
            refusal = f"the server refused {what} (HTTP {response.status_code}: "
            refusal += f"{error_detail(response.content)})"
            # A request fails alone, as the agent's error would; an answer or notification
            # lost is reported (no id: a notice), the connection kept. A connection that is
            # gone shows as the end of its stream.
            await self._deliver(_error_answer(seen.key if seen is not None else None, refusal))

    async def _opened(self, response: Any) -> None:
        connection_id = response.headers.get(CONNECTION_ID_HEADER)
        if response.status_code != 200 or not connection_id:
            detail = error_detail(response.content) or f"no {CONNECTION_ID_HEADER} header"
            raise refused(self.url, response.status_code, detail)
        self.connection_id = connection_id
        await self._deliver(response.content)
        await self._open_stream(None)

    async def receive(self) -> bytes:
        try:
            return await self._inbox.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return b""

    async def close(self, grace: float) -> None:
        """DELETE the connection, give the server ``grace`` seconds to end its stream,
        then stop reading."""
        if self.connection_id is not None and not self._ended.is_set():
            self._closing = True
            headers = {CONNECTION_ID_HEADER: self.connection_id, **self._headers}
            with anyio.move_on_after(grace), contextlib.suppress(self._httpx.HTTPError):
                await self._client.delete(self.url, headers=headers)
                await self._ended.wait()
        self._end(None)
        self._tg.cancel_scope.cancel()

    # The streams -----------------------------------------------------------------

    def _session_of(self, seen: Peeked | None) -> str | None:
        """The session a message of ours is scoped to: its params', else (an answer) that
        of the agent's request it answers."""
        if seen is None:
            return None
        if seen.response:
            return self._asked.pop(seen.key or b"", None)
        return seen.session_id

    async def _open_stream(self, session_id: str | None, *, ready: bool = False) -> None:
        """Open the stream (if it is not); with ``ready``, wait until the server answered
        the GET (refused or not: a server that opens it only on the answer gets it then)."""
        if session_id in self._streams or self._ended.is_set():
            return
        self._streams[session_id] = anyio.Event()
        opened = anyio.Event()
        self._tg.start_soon(self._read_stream, session_id, opened)
        if ready:
            await opened.wait()

    async def _read_stream(self, session_id: str | None, opened: anyio.Event) -> None:
        headers = {
            "Accept": "text/event-stream",
            CONNECTION_ID_HEADER: str(self.connection_id),
            **self._headers,
        }
        if session_id is not None:
            headers[SESSION_ID_HEADER] = session_id
        reason = "the server ended the connection's stream"
        try:
            # A connection of its own (the module's docstring says why), with the cookies.
            async with (
                self._new_client(self._client.cookies) as client,
                client.stream("GET", self.url, headers=headers) as response,
            ):
                opened.set()
                if response.status_code != 200:
                    await response.aread()
                    detail = error_detail(response.content)
                    reason = (
                        f"the server refused the stream (HTTP {response.status_code}: {detail})"
                    )
                else:
                    decoder = SseDecoder(self._max)
                    async for chunk in response.aiter_raw():
                        for event in decoder.feed(chunk):
                            await self._deliver(event)
                    for event in decoder.close():
                        await self._deliver(event)
        except self._httpx.HTTPError as exc:
            reason = f"the connection was lost ({exc!r})"
        finally:
            opened.set()
            self._streams.pop(session_id).set()
        if session_id is None:  # a session's stream may end; the connection's is the agent
            with anyio.move_on_after(CLOSE_GRACE):  # what the sessions' streams still hold
                for done in list(self._streams.values()):
                    await done.wait()
            self._end(reason)

    async def _deliver(self, message: bytes | SseEvent | OversizedLine) -> None:
        if isinstance(message, OversizedLine):
            return  # dropped unread, as the stdio path drops an oversized line
        if isinstance(message, SseEvent):
            message = message.data
        seen = peek(message) if self._attaching or b"sessionId" in message else None
        if seen is not None and seen.response:
            attached = self._attaching.pop(seen.key or b"", None)
            if seen.session_id is not None and not seen.failed:  # new's, fork's answer
                await self._open_stream(seen.session_id)
            if attached is not None and not seen.failed:  # (a server that refused it first)
                await self._open_stream(attached)
        elif seen is not None and seen.request and seen.session_id is not None:
            self._asked[seen.key or b""] = seen.session_id  # our answer carries the header
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            await self._send_inbox.send(message)

    def _end(self, reason: str | None) -> None:
        if self._ended.is_set():
            return
        if not self._closing:
            self._reason = reason
        self._ended.set()
        self._send_inbox.close()


def _attach(seen: Peeked | None) -> bool:
    return seen is not None and seen.request and attaches_session(seen.method)


def _error_answer(request_id: bytes | None, message: str) -> bytes:
    """The JSON-RPC error answer of a request the server refused (-32603, internal error).

    >>> _error_answer(b'7', "the server refused session/prompt (HTTP 413: too big)")
    b'{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"the server refused session/prompt (HTTP 413: too big)"}}'
    """
    error = msgspec.json.encode({"code": -32603, "message": message})
    return b'{"jsonrpc":"2.0","id":' + (request_id or b"null") + b',"error":' + error + b"}"
