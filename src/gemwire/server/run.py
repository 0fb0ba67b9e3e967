"""Running the app on hypercorn: the socket, the connections, the logs, the shutdown order.

hypercorn is the one server: it speaks HTTP/1.1 and, on the same port, HTTP/2 (the ACP
transport RFD says Streamable HTTP MUST): h2c on a plain socket, by prior knowledge and by
``Upgrade: h2c``; h2 by ALPN (``h2``, then ``http/1.1``) once given a certificate;
WebSockets on HTTP/1.1 (wsproto) and over h2 (RFC 8441). `Server` accepts the connections
itself (hypercorn's `TCPServer` serves each), so that it can hold the limits
docs/server.md documents:

- a connection must send a request's head within `HEAD_TIMEOUT` of its start, or of the end
  of its last response (hypercorn's keep-alive timeout runs from both), a TLS handshake
  within it too; a body must come within `security.BODY_TIMEOUT` (the app's);
- a head is capped at `MAX_HEAD_BYTES` (h11's buffer on HTTP/1.1, the header list size
  on HTTP/2), a WebSocket message at the server's cap, an h2 connection at `H2_STREAMS`
  streams at once;
- at most `MAX_CONNECTIONS` connections at once: one beyond is answered 503 and closed;
- a send waits for the client to read (hypercorn drains its writer; h2 flow control), so a
  client that does not read holds its stream, not the server's memory.
- a connection closed while its client still sends (a 413 before the whole body) reads and
  drops the rest for up to `LINGER`, so that the client reads the answer, not a reset; a
  WebSocket's close reaches the app with the client's code, and a message over the cap
  closes with 1009 and a reason (`run_ws`).

`bind` opens the listening socket first, so ``--port 0`` has its real port before the app
(whose allowed origins name it) is made. On SIGTERM or Ctrl-C the listener closes, the app
is told (`wind_down`: every turn ends with its ``turn_completed``, streams end, WebSockets
close with 1001, agents stop, the ACP endpoint's connections too), the connections close
(`CONNECTION_GRACE`, then those of clients that do not read are aborted), then the lifespan
ends, and the process exits 0. Logs go to stderr with the token masked.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from functools import partial
from typing import Any, cast
from urllib.parse import quote, quote_plus

import anyio
from hypercorn.app_wrappers import ASGIWrapper
from hypercorn.asyncio.lifespan import Lifespan
from hypercorn.asyncio.tcp_server import TCPServer
from hypercorn.asyncio.worker_context import WorkerContext
from hypercorn.config import Config
from hypercorn.typing import ASGIFramework
from starlette.applications import Starlette
from starlette.types import ASGIApp

from gemwire._normalize.masking import Masker
from gemwire.server import run_ws
from gemwire.server.config import MAX_HEAD_BYTES, ServerConfig
from gemwire.server.state import AppState

__all__ = (
    "H2_STREAMS",
    "MaskingFilter",
    "Server",
    "bind",
    "config_for",
    "configure_logging",
    "serve",
    "serve_until",
    "token_spellings",
    "wind_down",
)

HEAD_TIMEOUT = 10.0
"""Seconds a connection has to send a request's head (from its start, or from the end of its
last response; an idle keep-alive connection is closed then too)."""
MAX_CONNECTIONS = 2048
"""Connections at once; one beyond is answered 503 and closed."""
H2_STREAMS = 100
"""Streams (requests, SSE streams) one HTTP/2 connection may have open at once."""
CONNECTION_GRACE = 1.0
"""Seconds a connection has at shutdown, once the app ended its streams, to finish the
response it is sending; then it is aborted (its client does not read)."""
LINGER = 10.0
"""Seconds a connection the server closes goes on reading (and dropping) what its client
still sends, so that the client reads the answer (a 413 before its whole body) rather than
a reset."""
_LOGGERS = ("hypercorn.error", "hypercorn.access")
_ACCESS_FORMAT = '%(h)s - "%(m)s %(Uq)s HTTP/%(H)s" %(s)s'
"""An access line as uvicorn wrote it (``127.0.0.1:50000 - "GET /v1/sessions HTTP/2" 200``)."""
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 19\r\nconnection: close\r\n\r\nService Unavailable"
)


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (0: a free port); raises `OSError`."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not 0: asyncio turns Nagle off (TCP_NODELAY) only on sockets whose
    # proto says TCP, and accepted sockets take the listener's. Without it an SSE stream's first
    # events of a turn waited for the client's delayed ACK (40 ms).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6 and host == "::":
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
    except BaseException:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


class MaskingFilter(logging.Filter):
    """Masks the token (and other secrets) in every log record, arguments included."""

    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self._masker = Masker(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self._masker.text(record.getMessage())
        record.args = None
        return True


def token_spellings(token: str) -> list[str]:
    """``token`` as a log line may hold it: as it is, and URL-encoded (a request line's
    ``?token=``, percent- or plus-encoded).

    >>> token_spellings("a/b c+d")
    ['a/b c+d', 'a%2Fb%20c%2Bd', 'a%2Fb+c%2Bd', 'a/b%20c%2Bd']
    """
    spellings = [token, quote(token, safe=""), quote_plus(token), quote(token)]
    return list(dict.fromkeys(spellings))


def configure_logging(config: ServerConfig, names: tuple[str, ...]) -> None:
    """The loggers ``names`` and gemwire's server's, to stderr with the token masked."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(MaskingFilter(token_spellings(config.token)))
    for name in (*names, "gemwire.server"):
        logger = logging.getLogger(name)
        logger.handlers = [handler]
        logger.setLevel(logging.INFO)
        logger.propagate = False


async def wind_down(state: AppState) -> None:
    """Tell the app the server is stopping and wait for it: every turn ends with its
    ``turn_completed``, streams end, WebSockets close with 1001, agents stop."""
    sessions, acp = state.sessions, state.acp
    state.shutting_down.set()
    async with anyio.create_task_group() as tg:
        if sessions is not None:
            tg.start_soon(sessions.drain)
        if acp is not None:
            tg.start_soon(acp.drain)


def config_for(config: ServerConfig) -> Config:
    """hypercorn's configuration for ``config``: its limits, its TLS (ALPN h2 first)."""
    hyper = Config()
    hyper.certfile = config.ssl_certfile
    hyper.keyfile = config.ssl_keyfile
    hyper.alpn_protocols = ["h2", "http/1.1"]
    hyper.h11_max_incomplete_size = MAX_HEAD_BYTES
    hyper.h2_max_header_list_size = MAX_HEAD_BYTES
    hyper.h2_max_concurrent_streams = H2_STREAMS
    hyper.websocket_max_message_size = config.max_ws_message_bytes
    hyper.keep_alive_timeout = HEAD_TIMEOUT
    hyper.ssl_handshake_timeout = HEAD_TIMEOUT
    hyper.errorlog = logging.getLogger(_LOGGERS[0])
    hyper.accesslog = logging.getLogger(_LOGGERS[1])
    hyper.access_log_format = _ACCESS_FORMAT
    return hyper


class _Connection(TCPServer):
    """hypercorn's connection, let go once its client closed it: hypercorn's own waits for
    its keep-alive timeout then (counted among `MAX_CONNECTIONS` meanwhile); and closed
    lingering (`LINGER`) when the app answered before the client sent all it sends."""

    async def run(self) -> None:
        self._reading = asyncio.current_task()
        self._read_all = asyncio.Event()
        await super().run()

    async def _read_data(self) -> None:
        await super()._read_data()
        self._read_all.set()
        # Its streams were told (hypercorn handled Closed); what is left is the socket.
        await self.idle_task.restart(self._task_group, self._initiate_server_close)

    async def _close(self) -> None:
        # hypercorn closes an HTTP/1.1 connection whose request body was not read whole
        # (a 413 sent while the client still uploads) at once: the client's next bytes
        # then reset the connection, and a reset drops the answer the client had not read
        # yet. So the answer is followed by a FIN, and what still comes is read (the
        # reading task drops it) until the client closes or `LINGER` ends. Not from the
        # reading task itself (a WebSocket's Close, a malformed head): that one is what
        # would read.
        if asyncio.current_task() is not self._reading and not self._read_all.is_set():
            with contextlib.suppress(NotImplementedError, OSError, RuntimeError):
                self.writer.write_eof()  # NotImplementedError: TLS, which has no half close
            with anyio.move_on_after(LINGER):
                await self._read_all.wait()
        await super()._close()


class Server:
    """``app`` on hypercorn, with `config_for` ``config``'s limits and the shutdown order.

    ``drain`` tells the app the server stops and waits for it (default: `wind_down` of the
    app's `AppState`); the tests give any ASGI app (the ACP endpoint alone, an SDK's app)."""

    def __init__(
        self,
        app: ASGIApp,
        config: ServerConfig,
        *,
        drain: Callable[[], Awaitable[object]] | None = None,
    ) -> None:
        if drain is None:
            assert isinstance(app, Starlette)
            state = app.state.gemwire
            assert isinstance(state, AppState)
            drain = partial(wind_down, state)
        self._drain = drain
        run_ws.install()
        # Starlette's ASGI types are plain mappings, hypercorn's TypedDicts: the same protocol.
        self._app = ASGIWrapper(cast("ASGIFramework", app))
        self._hyper = config_for(config)
        self._connections: dict[asyncio.Task[None], asyncio.StreamWriter] = {}

    @property
    def writers(self) -> list[asyncio.StreamWriter]:
        """The open connections' writers (each transport's buffer: what waits to be sent)."""
        return list(self._connections.values())

    async def serve(self, sock: socket.socket, stop: Callable[[], Awaitable[object]]) -> None:
        """Serve on ``sock`` until ``stop`` returns, then wind down in order."""
        loop = asyncio.get_running_loop()
        hyper = self._hyper
        lifespan_state: dict[str, Any] = {}
        lifespan = Lifespan(self._app, hyper, loop, lifespan_state)
        lifespan_task = loop.create_task(lifespan.handle_lifespan())
        await lifespan.wait_for_startup()
        if lifespan_task.done() and (failure := lifespan_task.exception()) is not None:
            raise failure
        context = WorkerContext(None)

        async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            assert task is not None
            busy = len(self._connections) >= MAX_CONNECTIONS
            self._connections[task] = writer
            try:
                if busy:
                    await _refuse(reader, writer)
                else:
                    await _Connection(
                        self._app, loop, hyper, context, lifespan_state, reader, writer
                    )
            finally:
                del self._connections[task]

        tls = hyper.ssl_enabled
        listener = await asyncio.start_server(
            accepted,
            sock=sock,
            backlog=hyper.backlog,
            ssl=hyper.create_ssl_context() if tls else None,
            ssl_handshake_timeout=hyper.ssl_handshake_timeout if tls else None,
        )
        await stop()
        # No new connection while the app winds down. (Not wait_closed: from Python 3.12 it
        # waits for every connection, a stalled client's too.)
        listener.close()
        await self._drain()
        await context.terminated.set()  # hypercorn closes each connection once it is idle
        await self._close_connections()
        await lifespan.wait_for_shutdown()
        await lifespan_task

    async def _close_connections(self) -> None:
        """Give the connections `CONNECTION_GRACE` to finish the response they send; abort
        what is still open then (a client that does not read: its unsent bytes dropped)."""
        for attempt in range(2):
            if self._connections:
                await asyncio.wait(list(self._connections), timeout=CONNECTION_GRACE)
            for task, writer in list(self._connections.items()):
                if attempt:
                    task.cancel()
                else:
                    writer.transport.abort()
        if self._connections:
            await asyncio.wait(list(self._connections))


async def _refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A connection beyond `MAX_CONNECTIONS`: its request read (closing on unread bytes
    would reset the connection, the answer lost), answered 503, closed."""
    try:
        with anyio.move_on_after(HEAD_TIMEOUT):
            await reader.read(MAX_HEAD_BYTES)
        writer.write(_BUSY)
        writer.close()
        await writer.wait_closed()
    except OSError:
        writer.transport.abort()


async def serve_until(
    app: Starlette,
    config: ServerConfig,
    sock: socket.socket,
    stop: Callable[[], Awaitable[object]],
) -> None:
    """Serve ``app`` on ``sock`` until ``stop`` returns, then wind down in order."""
    await Server(app, config).serve(sock, stop)


async def _until_signalled(app: Starlette, config: ServerConfig, sock: socket.socket) -> None:
    """`serve_until` the first SIGTERM or Ctrl-C. The handler stays until the end: a second
    signal during the wind-down (systemd's, an impatient Ctrl-C) is held, where the default
    action would kill the process mid-way with its agents and logs half closed."""
    with ExitStack() as stack:
        try:
            signals = stack.enter_context(anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM))
        except NotImplementedError:  # Windows: Ctrl-C interrupts the loop, which closes it all
            await serve_until(app, config, sock, anyio.sleep_forever)
            return

        async def first() -> None:
            async for _ in signals:
                return

        await serve_until(app, config, sock, first)


def serve(app: Starlette, config: ServerConfig, sock: socket.socket) -> None:
    """Serve ``app`` on ``sock`` until SIGTERM or Ctrl-C; returns once all is closed."""
    configure_logging(config, _LOGGERS)
    anyio.run(_until_signalled, app, config, sock, backend="asyncio")
