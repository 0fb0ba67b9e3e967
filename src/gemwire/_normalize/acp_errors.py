"""The typed failure (`TurnError`) an ACP agent's JSON-RPC error stands for."""

from __future__ import annotations

from gemwire.events import TurnError
from gemwire.wire.jsonrpc import ErrorObject

__all__ = ("error_for",)

_RATE_LIMITED = ("Resource has been exhausted", "RESOURCE_EXHAUSTED")
_AUTH = ("API key not valid", "API_KEY_INVALID", "Authentication required")

# JSON-RPC error codes ACP gives a meaning (plus HTTP statuses, which Gemini CLI uses).
_CODE_KINDS = {
    # JSON-RPC's own errors: the two sides do not speak one protocol (e.g. a protocol
    # version gemwire does not speak, `check_protocol_version`).
    -32700: "protocol",
    -32600: "protocol",
    -32000: "auth",  # ACP auth_required
    # ACP resource_not_found (a session or file the agent does not have): bad input, not
    # "not_found", which is the agent executable missing (exit 4).
    -32002: "input",
    -32602: "input",
    -32800: "cancelled",  # ACP request_cancelled
    401: "auth",
    403: "auth",
    429: "rate_limited",
}


def error_for(error: ErrorObject, method: str) -> TurnError:
    """The typed failure an agent's JSON-RPC error stands for.

    Gemini CLI answers a failed prompt with the HTTP status as the code and the API's
    message (docs/gemini-cli.md#usage-and-errors-of-a-prompt): a 400 saying
    ``API key not valid`` is ``auth``.
    """
    message = error.message
    if error.data is not None and not isinstance(error.data, dict | list):
        message = f"{message}: {error.data}"
    elif isinstance(error.data, dict) and isinstance(error.data.get("details"), str):
        message = f"{message}: {error.data['details']}"
    kind = _CODE_KINDS.get(error.code)
    if any(marker in error.message for marker in _RATE_LIMITED):
        kind = "rate_limited"
    elif any(marker in error.message for marker in _AUTH):
        kind = "auth"
    elif kind is None:
        kind = "api" if 400 <= error.code < 600 else "agent"
    return TurnError(kind=kind, message=f"{method}: {message}" if method else message)
