"""The ACP client: any Agent Client Protocol agent, with confined files and safe permissions."""

from __future__ import annotations

from gemwire.errors import AccessDenied
from gemwire.runners.acp.channel import AgentChannel, MemoryChannel, memory_channel_pair
from gemwire.runners.acp.client import AcpClient
from gemwire.runners.acp.elicitation import (
    ElicitationAnswer,
    ElicitationHandler,
    ElicitationRequest,
    decline_elicitation,
)
from gemwire.runners.acp.errors import turn_error
from gemwire.runners.acp.events import MAX_QUEUED_EVENTS
from gemwire.runners.acp.files import ConfinedFileSystem
from gemwire.runners.acp.options import AcpOptions, AcpTurnResult, Prompt
from gemwire.runners.acp.permissions import (
    PERMISSION_PRESETS,
    PermissionHandler,
    PermissionPreset,
    PermissionRequest,
    choose_option,
    permission_preset,
)
from gemwire.runners.acp.process_channel import AgentLaunch, ProcessChannel
from gemwire.runners.acp.run import run_acp, run_acp_sync
from gemwire.runners.acp.session import AcpSession
from gemwire.runners.acp.terminals import TerminalPolicy, TerminalRequest, allow_all_commands
from gemwire.runners.acp.turn import CANCEL_GRACE, AcpTurn

__all__ = (
    "CANCEL_GRACE",
    "MAX_QUEUED_EVENTS",
    "PERMISSION_PRESETS",
    "AccessDenied",
    "AcpClient",
    "AcpOptions",
    "AcpSession",
    "AcpTurn",
    "AcpTurnResult",
    "AgentChannel",
    "AgentLaunch",
    "ConfinedFileSystem",
    "ElicitationAnswer",
    "ElicitationHandler",
    "ElicitationRequest",
    "MemoryChannel",
    "PermissionHandler",
    "PermissionPreset",
    "PermissionRequest",
    "ProcessChannel",
    "Prompt",
    "TerminalPolicy",
    "TerminalRequest",
    "allow_all_commands",
    "choose_option",
    "decline_elicitation",
    "memory_channel_pair",
    "permission_preset",
    "run_acp",
    "run_acp_sync",
    "turn_error",
)
