"""How a served session's turns run, one implementation per kind of session: `SessionBackend`.

An ACP session keeps an agent between its turns (`backend_acp.AcpBackend`); a
``gemini-stream`` session runs ``gemini -p`` once a turn (`backend_stream.StreamBackend`).
`SessionManager` keeps what all sessions share (the registry, the capacity, the store, the
drain: `SessionHost`) and hands each request to its session's backend; no code outside a
backend asks which kind a session is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any, Protocol

from anyio.abc import TaskGroup

from gemwire.errors import (
    AgentNotFound,
    AgentRequestFailed,
    PermissionsUnenforceable,
    RunFailed,
)
from gemwire.server.config import ServerConfig
from gemwire.server.live_session import LiveSession
from gemwire.server.responses import ApiError, BadRequest, NotFound
from gemwire.wire import acp

__all__ = ("SessionBackend", "SessionHost", "agent_call", "agent_failure")


class SessionHost(Protocol):
    """What a backend uses of the manager."""

    config: ServerConfig

    @property
    def tg(self) -> TaskGroup:
        """The manager's task group (a session's agent, a gemini-stream turn)."""
        ...

    def reserve(self) -> None:
        """Count one more agent against ``--max-sessions`` (`LimitReached` past it)."""

    def release(self) -> None: ...

    def confined(self, session: LiveSession) -> str:
        """The session's folder, confined to the roots again."""
        ...

    def save(self, session: LiveSession) -> None:
        """Save the session's record (a failure is said, not raised)."""


class SessionBackend(Protocol):
    """The turns, settings and stop of one kind of session (see the module docstring)."""

    def runs_agent(self, session: LiveSession) -> bool:
        """Whether the session holds an agent now (counted against ``--max-sessions``)."""
        ...

    async def prompt(self, session: LiveSession, prompt: str | Sequence[acp.ContentBlock]) -> int:
        """Start a turn (continuing a stopped session first); the seq its events follow."""
        ...

    async def cancel(self, session: LiveSession) -> None:
        """Cancel the running turn (`IllegalTransition` when none runs)."""

    async def stop(self, session: LiveSession, reason: str) -> None:
        """Stop what runs for the session (its turn first) and wait until it has."""

    async def set_mode(self, session: LiveSession, mode_id: str) -> None: ...

    async def set_model(self, session: LiveSession, model_id: str) -> None: ...

    async def set_config(self, session: LiveSession, config_id: str, value: Any) -> None: ...


def agent_failure(exc: BaseException) -> ApiError:
    """An agent that could not start, load or answer, as the API's error."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, AgentNotFound):
        return NotFound(f"the agent could not be started: {exc}")
    if isinstance(exc, PermissionsUnenforceable):
        return BadRequest(
            f"session refused: {exc}. Through the server: give POST /v1/sessions "
            '"mode" (one of its modes, which the session is then run in) or '
            '"permissions": "all"',
            kind="permissions_unenforceable",
        )
    if isinstance(exc, AgentRequestFailed) and exc.method == "session/set_mode":
        return BadRequest(f"the agent refused the session's mode: {exc}")
    kind = exc.kind if isinstance(exc, RunFailed) else "agent"
    return ApiError(f"the agent failed: {exc}", status=502, kind=kind)


async def agent_call(call: Awaitable[None]) -> None:
    """A request to the agent, its refusal a 400 and its failure a 502."""
    try:
        await call
    except AgentRequestFailed as exc:
        raise BadRequest(f"the agent refused: {exc}") from exc
    except RunFailed as exc:
        raise agent_failure(exc) from exc
