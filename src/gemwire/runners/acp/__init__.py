"""The ACP client: any Agent Client Protocol agent, with confined files and safe permissions."""

from __future__ import annotations

from gemwire.errors import AccessDenied
from gemwire.runners.acp.client import (
    AcpClient,
    AcpOptions,
    AcpSession,
    AcpTurn,
    AcpTurnResult,
    Prompt,
    run_acp,
    turn_error,
)
from gemwire.runners.acp.files import ConfinedFileSystem
from gemwire.runners.acp.permissions import (
    PERMISSION_PRESETS,
    PermissionHandler,
    PermissionPreset,
    PermissionRequest,
    choose_option,
    permission_preset,
)
from gemwire.runners.acp.terminals import TerminalPolicy, allow_all_commands

__all__ = (
    "PERMISSION_PRESETS",
    "AccessDenied",
    "AcpClient",
    "AcpOptions",
    "AcpSession",
    "AcpTurn",
    "AcpTurnResult",
    "ConfinedFileSystem",
    "PermissionHandler",
    "PermissionPreset",
    "PermissionRequest",
    "Prompt",
    "TerminalPolicy",
    "allow_all_commands",
    "choose_option",
    "permission_preset",
    "run_acp",
    "turn_error",
)
