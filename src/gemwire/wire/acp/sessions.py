"""Sessions: ``session/new``, ``load``, ``resume``, ``fork``, ``close``, ``delete``, ``list``, ``prompt``, ``cancel`` and the
``set_*`` methods; MCP servers a session is given."""

from __future__ import annotations

from typing import Literal

from gemwire.wire.acp._base import AcpStruct, JsonValue
from gemwire.wire.acp.content import ContentBlock
from gemwire.wire.acp.terminals import EnvVariable

__all__ = (
    "CancelNotification",
    "CloseSessionRequest",
    "DeleteSessionRequest",
    "ForkSessionRequest",
    "ForkSessionResponse",
    "HttpHeader",
    "ListSessionsRequest",
    "ListSessionsResponse",
    "LoadSessionRequest",
    "LoadSessionResponse",
    "McpServer",
    "McpServerHttp",
    "McpServerSse",
    "McpServerStdio",
    "ModelInfo",
    "NewSessionRequest",
    "NewSessionResponse",
    "PromptRequest",
    "PromptResponse",
    "ResumeSessionRequest",
    "ResumeSessionResponse",
    "SessionInfo",
    "SessionMode",
    "SessionModeState",
    "SessionModelState",
    "SetSessionConfigOptionRequest",
    "SetSessionModeRequest",
    "SetSessionModelRequest",
    "Usage",
)


class HttpHeader(AcpStruct, frozen=True, kw_only=True):
    name: str
    value: str


class McpServerStdio(AcpStruct, frozen=True, kw_only=True, omit_defaults=False):
    """A stdio MCP server (no ``type`` for this one upstream). ``args`` and ``env`` are
    required upstream, so they are always sent (Gemini CLI rejects a server without)."""

    name: str
    command: str
    args: list[str] = []
    env: list[EnvVariable] = []


class McpServerHttp(AcpStruct, frozen=True, kw_only=True, omit_defaults=False):
    type: Literal["http"] = "http"
    name: str
    url: str
    headers: list[HttpHeader] = []


class McpServerSse(AcpStruct, frozen=True, kw_only=True, omit_defaults=False):
    type: Literal["sse"] = "sse"
    name: str
    url: str
    headers: list[HttpHeader] = []


McpServer = McpServerStdio | McpServerHttp | McpServerSse
"""Sent only (the stdio variant has no tag, so this union is not decodable)."""


class NewSessionRequest(AcpStruct, frozen=True, kw_only=True):
    cwd: str
    mcp_servers: list[JsonValue]
    """`McpServer` values (required, may be empty)."""
    additional_directories: list[str] | None = None


class SessionMode(AcpStruct, frozen=True, kw_only=True):
    id: str
    name: str = ""
    description: str | None = None


class SessionModeState(AcpStruct, frozen=True, kw_only=True):
    current_mode_id: str
    available_modes: list[SessionMode] = []


class ModelInfo(AcpStruct, frozen=True, kw_only=True):
    """Unstable upstream (Gemini CLI sends it)."""

    model_id: str
    name: str = ""
    description: str | None = None


class SessionModelState(AcpStruct, frozen=True, kw_only=True):
    """Unstable upstream (Gemini CLI sends it)."""

    current_model_id: str
    available_models: list[ModelInfo] = []


class NewSessionResponse(AcpStruct, frozen=True, kw_only=True):
    session_id: str
    modes: SessionModeState | None = None
    models: SessionModelState | None = None
    config_options: list[dict[str, JsonValue]] | None = None


class LoadSessionRequest(AcpStruct, frozen=True, kw_only=True):
    session_id: str
    cwd: str
    mcp_servers: list[JsonValue]
    additional_directories: list[str] | None = None


class LoadSessionResponse(AcpStruct, frozen=True, kw_only=True):
    modes: SessionModeState | None = None
    models: SessionModelState | None = None
    config_options: list[dict[str, JsonValue]] | None = None


class ResumeSessionRequest(AcpStruct, frozen=True, kw_only=True):
    """``session/resume``: continue a session without its history being replayed."""

    session_id: str
    cwd: str
    mcp_servers: list[JsonValue]
    """Optional upstream; always sent, as for ``session/load`` (empty or not)."""
    additional_directories: list[str] | None = None


class ResumeSessionResponse(AcpStruct, frozen=True, kw_only=True):
    modes: SessionModeState | None = None
    models: SessionModelState | None = None
    config_options: list[dict[str, JsonValue]] | None = None


class ForkSessionRequest(AcpStruct, frozen=True, kw_only=True):
    """Unstable upstream (``session/fork``; Claude Code and OpenCode have it): a new session
    holding a copy of another's history."""

    session_id: str
    cwd: str
    mcp_servers: list[JsonValue]
    additional_directories: list[str] | None = None


class ForkSessionResponse(AcpStruct, frozen=True, kw_only=True):
    """Unstable upstream."""

    session_id: str
    modes: SessionModeState | None = None
    models: SessionModelState | None = None
    config_options: list[dict[str, JsonValue]] | None = None


class ListSessionsRequest(AcpStruct, frozen=True, kw_only=True):
    cwd: str | None = None
    cursor: str | None = None


class SessionInfo(AcpStruct, frozen=True, kw_only=True):
    session_id: str
    cwd: str
    additional_directories: list[str] | None = None
    title: str | None = None
    updated_at: str | None = None


class ListSessionsResponse(AcpStruct, frozen=True, kw_only=True):
    sessions: list[SessionInfo]
    next_cursor: str | None = None


class PromptRequest(AcpStruct, frozen=True, kw_only=True):
    session_id: str
    prompt: list[ContentBlock]


class Usage(AcpStruct, frozen=True, kw_only=True):
    total_tokens: int
    input_tokens: int
    output_tokens: int
    thought_tokens: int | None = None
    cached_read_tokens: int | None = None
    cached_write_tokens: int | None = None


StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]


class PromptResponse(AcpStruct, frozen=True, kw_only=True):
    stop_reason: StopReason | str
    usage: Usage | None = None


class CancelNotification(AcpStruct, frozen=True, kw_only=True):
    session_id: str


class CloseSessionRequest(AcpStruct, frozen=True, kw_only=True):
    """``session/close``: the agent cancels the session's work and frees it."""

    session_id: str


class DeleteSessionRequest(AcpStruct, frozen=True, kw_only=True):
    """``session/delete``: the agent deletes a saved session (one ``session/list`` lists)."""

    session_id: str


class SetSessionModeRequest(AcpStruct, frozen=True, kw_only=True):
    session_id: str
    mode_id: str


class SetSessionModelRequest(AcpStruct, frozen=True, kw_only=True):
    """Unstable upstream (``session/set_model``; Gemini CLI has it)."""

    session_id: str
    model_id: str


class SetSessionConfigOptionRequest(AcpStruct, frozen=True, kw_only=True):
    """A value id (``type`` absent), or ``type: "boolean"`` with a boolean ``value``."""

    session_id: str
    config_id: str
    value: JsonValue
    type: Literal["boolean"] | None = None
