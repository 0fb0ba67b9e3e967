"""`create_app`: the Starlette app of ``gemwire serve``.

Routes come from one module per area; each gives a list of routes, and `_routes` below
is the one place they are put together. `SecurityMiddleware` runs before every route
(token, Origin, Host, body size). The lifespan starts what the routes share (`AppState`)
and, at shutdown, ends every turn, stream and agent before the process exits.

The ACP endpoint (`AcpEndpoint`, a pure ASGI app) is mounted at ``/acp`` (the agent named
by ``?agent=``) and ``/acp/{agent}`` for HTTP and WebSocket alike; it starts the server's agents (`server_launcher`), at most
``max_sessions`` at once, in sessions under the roots, ending a connection idle for
``idle_timeout``; shutdown ends its connections (`AcpEndpoint.drain`).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.routing import BaseRoute, Route, WebSocketRoute

from gemwire._version import __version__
from gemwire.serve_api import Health, Ready
from gemwire.server import (
    openapi,
    routes_batches,
    routes_eval,
    routes_page,
    routes_saved,
    routes_sessions,
    routes_ws,
)
from gemwire.server.acp_endpoint import AcpEndpoint, server_launcher
from gemwire.server.agents import AgentLauncher, ProcessLauncher
from gemwire.server.batch_manager import BatchManager
from gemwire.server.config import ServerConfig
from gemwire.server.responses import (
    ApiError,
    JsonResponse,
    api_error_handler,
    http_exception_handler,
)
from gemwire.server.security import SecurityMiddleware
from gemwire.server.sessions import SessionManager
from gemwire.server.spares import SpareAgents
from gemwire.server.state import AppState, app_state
from gemwire.server.stream import StreamLauncher

__all__ = ("create_app",)


async def health(request: Request) -> JsonResponse:
    return JsonResponse(Health("ok", __version__))


async def ready(request: Request) -> JsonResponse:
    """``ready``, and ``degraded``: the sessions out of service, when there are any (a
    log that could not be written or was found damaged: the server serves the rest)."""
    state = app_state(request)
    degraded = state.sessions.degraded() if state.sessions is not None else []
    return JsonResponse(Ready(state.ready, degraded), 200 if state.ready else 503)


def _routes(acp: AcpEndpoint) -> list[BaseRoute]:
    routes: list[BaseRoute] = [
        Route("/health", health),
        Route("/ready", ready),
        Route("/acp", acp, methods=["GET", "POST", "DELETE"]),
        WebSocketRoute("/acp", acp),
        Route("/acp/{agent}", acp, methods=["GET", "POST", "DELETE"]),
        WebSocketRoute("/acp/{agent}", acp),
    ]
    # ---- Route lists of the other modules: one line each, here. ----------------------
    routes += routes_sessions.ROUTES
    routes += routes_ws.ROUTES
    routes += routes_saved.ROUTES
    routes += routes_batches.ROUTES
    routes += routes_eval.ROUTES
    routes += openapi.ROUTES
    routes += routes_page.routes()
    return routes


def create_app(
    config: ServerConfig,
    *,
    launcher: AgentLauncher | None = None,
    stream_launcher: StreamLauncher | None = None,
) -> Starlette:
    """The app for ``config``; agents start through ``launcher`` (default: processes,
    `ProcessLauncher`, with ``config.warm`` agents started ahead: `SpareAgents`) and
    ``gemini-stream`` turns through ``stream_launcher`` (default: `GeminiStreamLauncher`);
    tests give ones that start no process."""
    spares = SpareAgents(launcher or ProcessLauncher(config.agents), config.warm, config.roots[0])
    shutting_down = anyio.Event()
    batches = BatchManager(config.state_dir, shutting_down)
    acp = AcpEndpoint(
        server_launcher(spares, config.roots[0]),
        roots=config.roots,
        max_connections=config.max_sessions,
        idle_timeout=config.idle_timeout,
    )
    state = AppState(
        config=config, launcher=spares, batches=batches, acp=acp, shutting_down=shutting_down
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        os.makedirs(config.state_dir, mode=0o700, exist_ok=True)
        async with (
            spares,
            SessionManager(config, spares, stream_launcher) as sessions,
            batches,
            acp.running(),
        ):
            state.sessions = sessions
            state.started = True
            try:
                yield
            finally:
                state.shutting_down.set()

    app = Starlette(
        routes=_routes(acp),
        middleware=[Middleware(SecurityMiddleware, config=config)],
        exception_handlers={ApiError: api_error_handler, HTTPException: http_exception_handler},
        lifespan=lifespan,
    )
    # A path with a slash too many is a JSON 404 like any unknown path, not a redirect to
    # the path without it (an id ending in "/" answered 307, found by test_routes_saved).
    app.router.redirect_slashes = False
    app.state.gemwire = state
    return app
