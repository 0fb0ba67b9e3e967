"""How Gemini CLI says a run failed, as normalized error kinds (docs/events.md, error kinds).

Shared by the stream-json and json reducers: the fatal error types, the exit codes
(gemini-protocol.md §3.7) and the API error messages.
"""

from __future__ import annotations

import re

from gemwire.events import TurnError

__all__ = (
    "FATAL_KINDS",
    "TURN_CUT_SHORT",
    "api_error_kind",
    "error_kind_for_exit_code",
    "missing_result_error",
    "stop_reason_for",
)

# Warnings after which Gemini ends the turn early; its ACP mode reports both as
# max_turn_requests, and so do we.
TURN_CUT_SHORT = ("Loop detected", "Maximum session turns exceeded")

FATAL_KINDS = {
    "FatalTurnLimitedError": "turn_limit",
    "FatalAuthenticationError": "auth",
    "FatalInputError": "input",
    "FatalConfigError": "config",
    "FatalSandboxError": "config",
    "FatalUntrustedWorkspaceError": "untrusted",
    "FatalToolExecutionError": "agent",
    "FatalCancellationError": "cancelled",
}

_EXIT_KINDS = {
    41: "auth",
    42: "input",
    44: "config",
    52: "config",
    53: "turn_limit",
    54: "agent",
    55: "untrusted",
    130: "cancelled",
    145: "auth",  # HTTP 401 & 0xFF
    147: "auth",  # HTTP 403 & 0xFF
    173: "rate_limited",  # HTTP 429 & 0xFF
}

_HTTP_CODE = re.compile(r'"code":\s*(\d{3})')


def error_kind_for_exit_code(exit_code: int) -> str:
    """The failure kind Gemini CLI's exit code stands for (gemini-protocol.md §3.7)."""
    if exit_code in _EXIT_KINDS:
        return _EXIT_KINDS[exit_code]
    if exit_code < 0:  # killed by a signal
        return "crashed"
    # API errors exit with the HTTP status truncated to 8 bits (400..511 -> 144..255).
    return "api" if exit_code >= 144 else "agent"


def api_error_kind(message: str) -> str:
    match = _HTTP_CODE.search(message)
    code = int(match.group(1)) if match else None
    if code == 429 or "Resource has been exhausted" in message:
        return "rate_limited"
    if code in (401, 403) or "API key not valid" in message:
        return "auth"
    return "api"


def missing_result_error(exit_code: int | None) -> TurnError:
    """Why a run failed that ended without its result (document or event)."""
    if exit_code is None:
        return TurnError(kind="protocol", message="the stream ended without a result")
    if exit_code == 0:
        return TurnError(kind="crashed", message="the agent exited without a result", exit_code=0)
    return TurnError(
        kind=error_kind_for_exit_code(exit_code),
        message=f"the agent exited with code {exit_code} without a result",
        exit_code=exit_code,
    )


def stop_reason_for(kind: str) -> str:
    """The ``stop_reason`` of a turn that failed with error ``kind``."""
    return {"turn_limit": "max_turn_requests", "cancelled": "cancelled"}.get(kind, "error")
