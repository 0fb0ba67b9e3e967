"""What every route reaches through ``request.app.state``: `AppState`.

state = app_state(request)   # in any route or WebSocket endpoint
state.config.roots, state.launcher, state.sessions
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio
from starlette.requests import HTTPConnection

from gemwire.server.agents import AgentLauncher
from gemwire.server.config import ServerConfig

if TYPE_CHECKING:
    from gemwire.server.acp_endpoint import AcpEndpoint
    from gemwire.server.batch_manager import BatchManager
    from gemwire.server.sessions import SessionManager

__all__ = ("AppState", "app_state")


@dataclass(kw_only=True)
class AppState:
    """The server's shared state; ``sessions`` exists once the lifespan has started."""

    config: ServerConfig
    launcher: AgentLauncher
    sessions: SessionManager | None = None
    batches: BatchManager | None = None
    acp: AcpEndpoint | None = None
    """The ACP endpoint at ``/acp/{agent}``."""
    started: bool = False
    """The lifespan has started: the state folder is there and the session manager runs."""
    shutting_down: anyio.Event = field(default_factory=anyio.Event)
    """Set when shutdown begins: streams end, WebSockets close with 1001, /ready is 503."""

    @property
    def ready(self) -> bool:
        return self.started and not self.shutting_down.is_set()


def app_state(connection: HTTPConnection) -> AppState:
    """The `AppState` of the app serving ``connection`` (a `Request` or `WebSocket`)."""
    state = connection.app.state.gemwire
    assert isinstance(state, AppState)
    return state
