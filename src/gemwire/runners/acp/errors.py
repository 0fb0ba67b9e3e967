"""The ``turn_completed`` error an ACP failure stands for (one mapping, used by the turn
and by ``gemwire acp`` for a failure before any turn)."""

from __future__ import annotations

from gemwire._normalize.acp_errors import error_for
from gemwire.errors import AgentCrashed, AgentRequestFailed, RunTimedOut
from gemwire.events import TurnError
from gemwire.wire.jsonrpc import ErrorObject

__all__ = ("turn_error",)


def turn_error(exc: AgentRequestFailed | AgentCrashed | RunTimedOut, method: str = "") -> TurnError:
    """The ``turn_completed`` error an agent's failure stands for; ``method`` prefixes the
    message (for a request that failed before any turn, say which)."""
    if isinstance(exc, AgentCrashed):
        return TurnError(kind="crashed", message=str(exc), exit_code=exc.exit_code)
    if isinstance(exc, RunTimedOut):
        return TurnError(kind="timeout", message=str(exc))
    return error_for(ErrorObject(code=exc.code, message=str(exc), data=exc.data), method)
