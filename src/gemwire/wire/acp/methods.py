"""Schema version, protocol version, and the method names of ACP v1 (the ones gemwire uses);
``$/cancel_request``, the one method either side may send."""

from __future__ import annotations

from gemwire.wire.acp._base import AcpStruct
from gemwire.wire.jsonrpc import RequestId

__all__ = (
    "AGENT_METHODS",
    "CLIENT_METHODS",
    "PROTOCOL_METHODS",
    "PROTOCOL_VERSION",
    "SCHEMA_VERSION",
    "CancelRequestNotification",
)

SCHEMA_VERSION = "v1.24.1"
PROTOCOL_VERSION = 1

AGENT_METHODS = {
    "initialize": "initialize",
    "authenticate": "authenticate",
    "session_new": "session/new",
    "session_load": "session/load",
    "session_resume": "session/resume",
    "session_close": "session/close",
    "session_delete": "session/delete",
    "session_fork": "session/fork",  # unstable upstream; Claude Code and OpenCode have it
    "session_list": "session/list",
    "session_prompt": "session/prompt",
    "session_cancel": "session/cancel",
    "session_set_mode": "session/set_mode",
    "session_set_config_option": "session/set_config_option",
    "session_set_model": "session/set_model",  # unstable upstream; Gemini CLI has it
    "logout": "logout",
}
"""Methods a client calls on an agent (the ones gemwire uses)."""

CLIENT_METHODS = {
    "session_update": "session/update",
    "session_request_permission": "session/request_permission",
    "fs_read_text_file": "fs/read_text_file",
    "fs_write_text_file": "fs/write_text_file",
    "terminal_create": "terminal/create",
    "terminal_output": "terminal/output",
    "terminal_wait_for_exit": "terminal/wait_for_exit",
    "terminal_kill": "terminal/kill",
    "terminal_release": "terminal/release",
    "elicitation_create": "elicitation/create",
    "elicitation_complete": "elicitation/complete",
}
"""Methods an agent calls on a client (the ones gemwire serves)."""

PROTOCOL_METHODS = {
    "cancel_request": "$/cancel_request",
}
"""Methods either side may send (gemwire sends them)."""


class CancelRequestNotification(AcpStruct, frozen=True, kw_only=True):
    """``$/cancel_request``: the sender no longer wants the answer to ``request_id`` (the
    receiver may stop its work and answer it with error -32800)."""

    request_id: RequestId
