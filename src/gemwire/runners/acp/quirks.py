"""Agent quirks, chosen per agent: no agent's workaround runs for another.

An agent's quirks are known by its name: the ``agentInfo.name`` it gives in
``initialize``, or, when it gives none, the name its built-in `AgentSpec` reports
(``agent_identity``). An agent without quirks of its own gets `NoQuirks`.

    >>> type(quirks_for("acp:gemini-cli")).__name__, type(quirks_for("acp:qwen-code")).__name__
    ('GeminiCliQuirks', 'NoQuirks')
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol

from gemwire.runners.acp.gemini_cli import GeminiCliQuirks
from gemwire.runners.agents import AGENTS

__all__ = ("AgentQuirks", "NoQuirks", "quirks_for")


class AgentQuirks(Protocol):
    """Where the client lets an agent's workarounds in."""

    def opening_session(self) -> AbstractAsyncContextManager[None]:
        """Held around ``session/new`` and ``session/load``."""
        ...

    async def protect_loaded_session(
        self, environment: Mapping[str, str], folder: str, session_id: str
    ) -> str | None:
        """After ``session/load``: a warning to report, if any."""
        ...


class NoQuirks:
    """An agent that follows the schema."""

    @asynccontextmanager
    async def opening_session(self) -> AsyncIterator[None]:
        yield

    async def protect_loaded_session(
        self, environment: Mapping[str, str], folder: str, session_id: str
    ) -> str | None:
        return None


_QUIRKS: dict[str, Callable[[], AgentQuirks]] = {
    f"acp:{AGENTS['gemini'].reported_name}": GeminiCliQuirks,
}
"""By an agent's ``agent`` field (``acp:`` and its name)."""


def quirks_for(agent: str) -> AgentQuirks:
    """The quirks of the agent whose events carry ``agent`` (``agent_identity``)."""
    make = _QUIRKS.get(agent)
    return make() if make is not None else NoQuirks()
