"""Running the app on hypercorn, for HTTP/2 (``gemwire serve --http2``).

uvicorn speaks only HTTP/1.1; the transport RFD says Streamable HTTP MUST use HTTP/2.
hypercorn speaks HTTP/1.1, h2c (prior knowledge, and ``Upgrade: h2c``) on a plain socket,
h2 by ALPN (``h2``, then ``http/1.1``) once given a certificate, and WebSockets on
HTTP/1.1 (wsproto) and over h2 (RFC 8441). The app is the same; what differs from
`gemwire.server.run` is the server's limits (docs/server.md, "HTTP/2"):

- a connection with no request in flight is closed after `HEAD_TIMEOUT` (hypercorn's
  keep-alive timeout, which runs from the connection too: the head deadline uvicorn lacked);
- a head is capped at `MAX_HEAD_BYTES` (HTTP/1.1) and at hypercorn's header list size
  (HTTP/2), a WebSocket message at the server's cap;
- a send waits for the client to read (hypercorn drains its writer; h2 flow control), so a
  client that does not read holds its stream, not the server's memory;
- there is no cap on connections (`MAX_CONNECTIONS` is uvicorn's); an h2 connection carries
  at most `H2_STREAMS` streams at once.

On SIGTERM or Ctrl-C the app winds down first (`wind_down`: turns end, streams end,
WebSockets close with 1001, agents stop), then hypercorn closes the listener and gives the
connections `CONNECTION_GRACE` to finish, then the lifespan ends.
"""

from __future__ import annotations

import logging
import signal
import socket
from collections.abc import Awaitable, Callable
from typing import cast

import anyio
from hypercorn.app_wrappers import ASGIWrapper
from hypercorn.asyncio.run import worker_serve
from hypercorn.config import Config, Sockets
from hypercorn.typing import ASGIFramework
from starlette.applications import Starlette

from gemwire.server.config import MAX_HEAD_BYTES, ServerConfig
from gemwire.server.run import CONNECTION_GRACE, HEAD_TIMEOUT, configure_logging, wind_down
from gemwire.server.state import AppState

__all__ = ("H2_STREAMS", "config_for", "serve_h2", "serve_until")

H2_STREAMS = 100
"""Streams (requests, SSE streams) one HTTP/2 connection may have open at once."""
_LOGGERS = ("hypercorn.error", "hypercorn.access")


def config_for(config: ServerConfig) -> Config:
    """hypercorn's configuration for ``config``: its limits, its TLS (ALPN h2 first)."""
    hyper = Config()
    hyper.certfile = config.ssl_certfile
    hyper.keyfile = config.ssl_keyfile
    hyper.alpn_protocols = ["h2", "http/1.1"]
    hyper.h11_max_incomplete_size = MAX_HEAD_BYTES
    hyper.h2_max_concurrent_streams = H2_STREAMS
    hyper.websocket_max_message_size = config.max_ws_message_bytes
    hyper.keep_alive_timeout = HEAD_TIMEOUT
    hyper.graceful_timeout = CONNECTION_GRACE
    hyper.errorlog = logging.getLogger(_LOGGERS[0])
    hyper.accesslog = logging.getLogger(_LOGGERS[1])
    return hyper


async def serve_until(
    app: Starlette,
    config: ServerConfig,
    sock: socket.socket,
    stop: Callable[[], Awaitable[object]],
) -> None:
    """Serve ``app`` on ``sock`` until ``stop`` returns, then wind down in order."""
    state = app.state.gemwire
    assert isinstance(state, AppState)

    async def stopped() -> None:
        await stop()
        await wind_down(state)

    hyper = config_for(config)
    tls = hyper.ssl_enabled
    sockets = Sockets(
        secure_sockets=[sock] if tls else [],
        insecure_sockets=[] if tls else [sock],
        quic_sockets=[],
    )
    # Starlette's ASGI types are plain mappings, hypercorn's TypedDicts: the same protocol.
    asgi = cast("ASGIFramework", app)
    await worker_serve(ASGIWrapper(asgi), hyper, sockets=sockets, shutdown_trigger=stopped)


async def _signalled() -> None:
    try:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                return
    except NotImplementedError:  # Windows: Ctrl-C interrupts hypercorn, which closes it all
        await anyio.sleep_forever()


def serve_h2(app: Starlette, config: ServerConfig, sock: socket.socket) -> None:
    """Serve ``app`` on ``sock`` until SIGTERM or Ctrl-C; returns once all is closed."""
    configure_logging(config, _LOGGERS)
    anyio.run(serve_until, app, config, sock, _signalled, backend="asyncio")
