"""Running the app on uvicorn: the socket, the logs, the shutdown order.

`bind` opens the listening socket first, so ``--port 0`` has its real port before the
app (whose allowed origins name it) is made. `serve` runs uvicorn (WebSockets by
wsproto, frames capped at the stdio line cap) with its signal handling: on SIGTERM or
Ctrl-C the listener closes, the app is told (`AppState.shutting_down`: every turn ends with
its ``turn_completed``, streams end, WebSockets close with 1001, agents stop, the ACP
endpoint's connections too), the connections close (`CONNECTION_GRACE`, then those of
clients that do not read are aborted), then uvicorn ends the rest. Logs go to stderr with
the token masked.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import sys
from collections.abc import Generator
from typing import Any
from urllib.parse import quote, quote_plus

import anyio
import h11
import uvicorn
from starlette.applications import Starlette
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.websockets.wsproto_impl import WSProtocol

from gemwire._normalize.masking import Masker
from gemwire.server.config import MAX_HEAD_BYTES, ServerConfig
from gemwire.server.state import AppState

__all__ = (
    "MaskingFilter",
    "bind",
    "configure_logging",
    "serve",
    "server_for",
    "token_spellings",
    "wind_down",
)

_SHUTDOWN_GRACE = 30
"""Seconds uvicorn waits for requests still running once the connections are closed."""
HEAD_TIMEOUT = 10.0
"""Seconds a connection has to send a request's head (uvicorn has no such timeout: a client
that connected and sent nothing, or half a head, was kept for ever)."""
MAX_CONNECTIONS = 2048
"""Connections (and running requests) at once; a request beyond is answered 503."""
CONNECTION_GRACE = 1.0
"""Seconds a connection has at shutdown, once the app ended its streams, to finish the
response it is sending; then it is aborted (its client does not read)."""


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


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, state: AppState) -> None:
        super().__init__(config)
        self._state = state

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None]:
        # uvicorn raises the signal again once it has shut down (the process would die
        # of SIGTERM); a server that closed everything in order exits 0 instead.
        with super().capture_signals():
            try:
                yield
            finally:
                self._captured_signals.clear()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # No new connection while the app winds down (uvicorn would close the listener
        # only after it).
        for server in self.servers:
            server.close()
        # uvicorn would close WebSockets with 1012 and wait for SSE streams that never
        # end: the app ends them first (and its turns, with their turn_completed; the ACP
        # endpoint's connections and their agents).
        await wind_down(self._state)
        await self._close_connections()
        await super().shutdown(sockets)

    async def _close_connections(self) -> None:
        """Close every connection: those between requests at once, those finishing a
        response once it is sent; after `CONNECTION_GRACE`, what is still open belongs to a
        client that does not read (a stalled stream): aborted, its unsent bytes dropped.
        uvicorn alone would wait for it `_SHUTDOWN_GRACE` seconds."""
        connections = self.server_state.connections
        for connection in list(connections):
            # A WebSocket was closed by the app (1001); uvicorn's shutdown would close it
            # again (1012), which wsproto refuses once a close was sent.
            if not isinstance(connection, WSProtocol):
                connection.shutdown()
        with anyio.move_on_after(CONNECTION_GRACE):
            await self._all_closed()
        for connection in list(connections):
            connection.transport.abort()
        with anyio.move_on_after(CONNECTION_GRACE):  # each leaves once the loop tells it
            await self._all_closed()

    async def _all_closed(self) -> None:
        # uvicorn's connection set has no event to wait for (uvicorn polls it too).
        while self.server_state.connections:  # noqa: ASYNC110
            await anyio.sleep(0.02)


class _Http(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, with a deadline for each request's head: `HEAD_TIMEOUT`
    from the connection, or from the end of the last response, until the head is read."""

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._head_due = self.loop.call_later(HEAD_TIMEOUT, self._head_timed_out)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # a head came (or an upgrade)
            self._head_due.cancel()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._head_due.cancel()
            self._head_due = self.loop.call_later(HEAD_TIMEOUT, self._head_timed_out)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self._head_due.cancel()

    def _head_timed_out(self) -> None:
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def server_for(app: Starlette, config: ServerConfig) -> uvicorn.Server:
    """The uvicorn server of ``app`` as `serve` runs it (its limits, its shutdown order);
    ``run(sockets=[sock])`` or ``serve(sockets=[sock])`` it."""
    options: dict[str, Any] = {}
    if config.ssl_certfile:
        options = {"ssl_certfile": config.ssl_certfile, "ssl_keyfile": config.ssl_keyfile}
    uvicorn_config = uvicorn.Config(
        app,
        http=_Http,
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
        limit_concurrency=MAX_CONNECTIONS,
        ws="wsproto",
        ws_max_size=config.max_ws_message_bytes,
        lifespan="on",
        log_config=None,
        timeout_graceful_shutdown=_SHUTDOWN_GRACE,
        **options,
    )
    state = app.state.gemwire
    assert isinstance(state, AppState)
    return _Server(uvicorn_config, state)


def serve(app: Starlette, config: ServerConfig, sock: socket.socket) -> None:
    """Serve ``app`` on ``sock`` until SIGTERM or Ctrl-C; returns once all is closed."""
    configure_logging(config, ("uvicorn", "uvicorn.error", "uvicorn.access"))
    server_for(app, config).run(sockets=[sock])
