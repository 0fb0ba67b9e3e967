"""Agent quirks, chosen per agent: no agent's workaround runs for another.

An agent's quirks are known by its name: the ``agentInfo.name`` it gives in
``initialize``, or, when it gives none, the name its built-in `AgentSpec` reports
(``agent_identity``). A renamed package is the same agent with another release
(`AgentRelease`): its quirks are keyed by the release that has them. An agent without quirks of its own gets `NoQuirks`, and every
protocol violation it commits is a ``notice`` (`drops_violation`).

    >>> type(quirks_for("acp:gemini-cli")).__name__, type(quirks_for("acp:qwen-code")).__name__
    ('GeminiCliQuirks', 'NoQuirks')
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol

import msgspec

from gemwire.errors import AgentRequestFailed
from gemwire.protocol.acp import ProtocolViolation
from gemwire.runners.acp.gemini_cli import GeminiCliQuirks
from gemwire.runners.agents import AGENTS

__all__ = ("AgentQuirks", "NoQuirks", "drops_violation", "quirks_for")


class AgentQuirks(Protocol):
    """Where the client lets an agent's workarounds in."""

    def opening_session(self) -> AbstractAsyncContextManager[None]:
        """Held around ``session/new`` and ``session/load``."""
        ...

    async def before_load(
        self,
        environment: Mapping[str, str],
        folder: str,
        session_id: str,
        notify: Callable[[str], None],
    ) -> None:
        """Before ``session/load``: wait until loading is safe (``notify`` says why)."""
        ...

    def load_failed(
        self, error: AgentRequestFailed, folder: str, session_id: str
    ) -> AgentRequestFailed:
        """The error a failed ``session/load`` raises (``error``, or a clearer one)."""
        ...

    async def settle_replay(self, updates: Callable[[], int]) -> None:
        """After ``session/load`` answered: until the replay has ended (``updates()``:
        the session's updates so far)."""
        ...

    async def protect_loaded_session(
        self, environment: Mapping[str, str], folder: str, session_id: str
    ) -> str | None:
        """After ``session/load``: a warning to report, if any."""
        ...


class NoQuirks:
    """An agent that follows the schema: it sends a loaded session's history before it
    answers ``session/load``, so nothing waits for it."""

    @asynccontextmanager
    async def opening_session(self) -> AsyncIterator[None]:
        yield

    async def before_load(
        self,
        environment: Mapping[str, str],
        folder: str,
        session_id: str,
        notify: Callable[[str], None],
    ) -> None:
        return None

    def load_failed(
        self, error: AgentRequestFailed, folder: str, session_id: str
    ) -> AgentRequestFailed:
        return error

    async def settle_replay(self, updates: Callable[[], int]) -> None:
        return None

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


_CANCEL_REQUEST_UNKNOWN = {
    "jsonrpc": "2.0",
    "error": {"code": -32601, "message": "Method not found", "data": "$/cancel_request"},
}
"""What codex-acp 0.16.0 answers the ``$/cancel_request`` notification with: an error
response, with no id (a notification has none to answer), saying it does not know it."""


def _codex_cancel_request_answer(violation: ProtocolViolation) -> bool:
    if violation.reason != "a response without an id":
        return False
    try:
        return bool(msgspec.json.decode(violation.line) == _CANCEL_REQUEST_UNKNOWN)
    except msgspec.DecodeError:
        return False


_HARMLESS_VIOLATIONS: dict[str, Callable[[ProtocolViolation], bool]] = {
    # The Rust codex-acp's; 2.x, a TypeScript adapter of another package, answers no
    # notification.
    AGENTS["codex"].release("0.16.0").identity: _codex_cancel_request_answer,
}
"""By an agent's ``agent`` field: the protocol violations it commits that harm nothing."""


def drops_violation(agent: str, violation: ProtocolViolation) -> bool:
    """Whether ``violation`` is one ``agent`` is known to commit harmlessly, dropped quietly
    instead of told as a ``notice``: only Codex's answer to ``$/cancel_request``.

    >>> answer = ProtocolViolation(
    ...     reason="a response without an id",
    ...     line='{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found",'
    ...     '"data":"$/cancel_request"}}',
    ... )
    >>> drops_violation("acp:codex-acp", answer), drops_violation("acp:qwen-code", answer)
    (True, False)
    """
    harmless = _HARMLESS_VIOLATIONS.get(agent)
    return harmless is not None and harmless(violation)
