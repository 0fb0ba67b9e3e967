"""``terminal/*``: the agent runs commands through the client."""

from __future__ import annotations

from gemwire.wire.acp._base import AcpStruct

__all__ = (
    "CreateTerminalRequest",
    "CreateTerminalResponse",
    "EnvVariable",
    "KillTerminalRequest",
    "KillTerminalResponse",
    "ReleaseTerminalRequest",
    "ReleaseTerminalResponse",
    "TerminalExitStatus",
    "TerminalOutputRequest",
    "TerminalOutputResponse",
    "WaitForTerminalExitRequest",
    "WaitForTerminalExitResponse",
)


class EnvVariable(AcpStruct, frozen=True, kw_only=True):
    name: str
    value: str


class CreateTerminalRequest(AcpStruct, frozen=True, kw_only=True):
    session_id: str
    command: str
    args: list[str] = []
    env: list[EnvVariable] = []
    cwd: str | None = None
    output_byte_limit: int | None = None


class CreateTerminalResponse(AcpStruct, frozen=True, kw_only=True):
    terminal_id: str


class TerminalOutputRequest(AcpStruct, frozen=True, kw_only=True):
    session_id: str
    terminal_id: str


class TerminalExitStatus(AcpStruct, frozen=True, kw_only=True):
    exit_code: int | None = None
    signal: str | None = None


class TerminalOutputResponse(AcpStruct, frozen=True, kw_only=True):
    output: str
    truncated: bool
    exit_status: TerminalExitStatus | None = None


class WaitForTerminalExitRequest(AcpStruct, frozen=True, kw_only=True):
    session_id: str
    terminal_id: str


class WaitForTerminalExitResponse(AcpStruct, frozen=True, kw_only=True):
    exit_code: int | None = None
    signal: str | None = None


class KillTerminalRequest(AcpStruct, frozen=True, kw_only=True):
    session_id: str
    terminal_id: str


class ReleaseTerminalRequest(AcpStruct, frozen=True, kw_only=True):
    session_id: str
    terminal_id: str


class KillTerminalResponse(AcpStruct, frozen=True, kw_only=True):
    """``terminal/kill``'s answer: empty (but for ``_meta``)."""


class ReleaseTerminalResponse(AcpStruct, frozen=True, kw_only=True):
    """``terminal/release``'s answer: empty (but for ``_meta``)."""
