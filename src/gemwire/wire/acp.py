"""Agent Client Protocol (ACP) v1 messages, exactly as upstream names them.

Pinned to the ACP schema ``v1.19.0`` (the schema the official Python SDK 0.12.1 is
generated from), protocol version 1. JSON field names are upstream's camelCase; every
type may carry upstream's ``_meta`` extension object (``meta`` here). Only the client
side is here: what a client sends, and what an agent sends to a client.

Session updates are not one tagged union on purpose: an agent newer than this schema
may send kinds this module does not know, and those must survive as raw data, so the
protocol layer reads the ``sessionUpdate`` tag first and decodes with
`SESSION_UPDATE_TYPES`.

Unstable upstream methods that real agents implement are included and marked so
(Gemini CLI's ``session/set_model`` and the ``models`` of a new session).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

__all__ = (
    "AGENT_METHODS",
    "CLIENT_METHODS",
    "PROTOCOL_VERSION",
    "SCHEMA_VERSION",
    "SESSION_UPDATE_TYPES",
    "AgentCapabilities",
    "Annotations",
    "AudioContent",
    "AuthMethod",
    "AuthenticateRequest",
    "AvailableCommand",
    "AvailableCommandsUpdate",
    "CancelNotification",
    "CancelledPermissionOutcome",
    "ClientCapabilities",
    "ConfigOptionUpdate",
    "Content",
    "ContentBlock",
    "ContentChunk",
    "Cost",
    "CreateTerminalRequest",
    "CreateTerminalResponse",
    "CurrentModeUpdate",
    "Diff",
    "EmbeddedResource",
    "EnvVariable",
    "FileSystemCapabilities",
    "HttpHeader",
    "ImageContent",
    "Implementation",
    "InitializeRequest",
    "InitializeResponse",
    "KillTerminalRequest",
    "ListSessionsRequest",
    "ListSessionsResponse",
    "LoadSessionRequest",
    "LoadSessionResponse",
    "McpCapabilities",
    "McpServer",
    "McpServerHttp",
    "McpServerSse",
    "McpServerStdio",
    "ModelInfo",
    "NewSessionRequest",
    "NewSessionResponse",
    "PermissionOption",
    "Plan",
    "PlanEntry",
    "PromptCapabilities",
    "PromptRequest",
    "PromptResponse",
    "ReadTextFileRequest",
    "ReadTextFileResponse",
    "ReleaseTerminalRequest",
    "RequestPermissionOutcome",
    "RequestPermissionRequest",
    "RequestPermissionResponse",
    "ResourceContents",
    "ResourceLink",
    "SelectedPermissionOutcome",
    "SessionCapabilities",
    "SessionInfo",
    "SessionInfoUpdate",
    "SessionMode",
    "SessionModeState",
    "SessionModelState",
    "SessionNotification",
    "SetSessionConfigOptionRequest",
    "SetSessionModeRequest",
    "SetSessionModelRequest",
    "Terminal",
    "TerminalExitStatus",
    "TerminalOutputRequest",
    "TerminalOutputResponse",
    "TextContent",
    "ToolCall",
    "ToolCallContent",
    "ToolCallLocation",
    "ToolCallUpdate",
    "Usage",
    "UsageUpdate",
    "WaitForTerminalExitRequest",
    "WaitForTerminalExitResponse",
    "WriteTextFileRequest",
)

SCHEMA_VERSION = "v1.19.0"
PROTOCOL_VERSION = 1

AGENT_METHODS = {
    "initialize": "initialize",
    "authenticate": "authenticate",
    "session_new": "session/new",
    "session_load": "session/load",
    "session_list": "session/list",
    "session_prompt": "session/prompt",
    "session_cancel": "session/cancel",
    "session_set_mode": "session/set_mode",
    "session_set_config_option": "session/set_config_option",
    "session_set_model": "session/set_model",  # unstable upstream; Gemini CLI has it
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
}
"""Methods an agent calls on a client (the ones gemwire serves)."""


class _Wire(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    rename="camel",
    omit_defaults=True,
    repr_omit_defaults=True,
):
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


# Content ---------------------------------------------------------------------------


class Annotations(_Wire, frozen=True, kw_only=True):
    audience: list[str] | None = None
    last_modified: str | None = None
    priority: float | None = None


class _Block(_Wire, frozen=True, kw_only=True, tag_field="type"):
    annotations: Annotations | None = None


class TextContent(_Block, frozen=True, kw_only=True, tag="text"):
    text: str


class ImageContent(_Block, frozen=True, kw_only=True, tag="image"):
    data: str
    """Base64."""
    mime_type: str
    uri: str | None = None


class AudioContent(_Block, frozen=True, kw_only=True, tag="audio"):
    data: str
    mime_type: str


class ResourceLink(_Block, frozen=True, kw_only=True, tag="resource_link"):
    name: str
    uri: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None


class ResourceContents(_Wire, frozen=True, kw_only=True):
    """Upstream's ``TextResourceContents | BlobResourceContents`` in one type.

    The two differ only by having ``text`` or ``blob`` and carry no tag, which a typed
    decoder cannot tell apart; exactly one of the two is set.
    """

    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: str | None = None


class EmbeddedResource(_Block, frozen=True, kw_only=True, tag="resource"):
    resource: ResourceContents


ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource

# Tool calls ------------------------------------------------------------------------

ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
ToolCallStatus = Literal["pending", "in_progress", "completed", "failed"]


class _ToolContent(_Wire, frozen=True, kw_only=True, tag_field="type"):
    pass


class Content(_ToolContent, frozen=True, kw_only=True, tag="content"):
    content: ContentBlock


class Diff(_ToolContent, frozen=True, kw_only=True, tag="diff"):
    path: str
    old_text: str | None = None
    """``None`` for a new file (Gemini CLI sends ``""`` and ``_meta.kind: "add"``)."""
    new_text: str


class Terminal(_ToolContent, frozen=True, kw_only=True, tag="terminal"):
    terminal_id: str


ToolCallContent = Content | Diff | Terminal


class ToolCallLocation(_Wire, frozen=True, kw_only=True):
    path: str
    line: int | None = None


class ToolCall(_Wire, frozen=True, kw_only=True):
    """``sessionUpdate: "tool_call"``: a new tool call."""

    tool_call_id: str
    title: str
    kind: ToolKind | str | None = None
    status: ToolCallStatus | str | None = None
    content: list[ToolCallContent] | None = None
    locations: list[ToolCallLocation] | None = None
    raw_input: Any = None
    raw_output: Any = None


class ToolCallUpdate(_Wire, frozen=True, kw_only=True):
    """``sessionUpdate: "tool_call_update"``, and the tool call of a permission request:
    only the fields that changed are present."""

    tool_call_id: str
    title: str | None = None
    kind: ToolKind | str | None = None
    status: ToolCallStatus | str | None = None
    content: list[ToolCallContent] | None = None
    locations: list[ToolCallLocation] | None = None
    raw_input: Any = None
    raw_output: Any = None


# Session updates -------------------------------------------------------------------


class ContentChunk(_Wire, frozen=True, kw_only=True):
    """``user_message_chunk``, ``agent_message_chunk`` and ``agent_thought_chunk``."""

    content: ContentBlock
    message_id: str | None = None


class PlanEntry(_Wire, frozen=True, kw_only=True):
    content: str
    priority: Literal["high", "medium", "low"] | str
    status: Literal["pending", "in_progress", "completed"] | str


class Plan(_Wire, frozen=True, kw_only=True):
    """``sessionUpdate: "plan"``: the whole plan, replacing the previous one."""

    entries: list[PlanEntry]


class AvailableCommand(_Wire, frozen=True, kw_only=True):
    name: str
    description: str = ""
    input: dict[str, Any] | None = None


class AvailableCommandsUpdate(_Wire, frozen=True, kw_only=True):
    available_commands: list[AvailableCommand]


class CurrentModeUpdate(_Wire, frozen=True, kw_only=True):
    current_mode_id: str


class ConfigOptionUpdate(_Wire, frozen=True, kw_only=True):
    config_options: list[dict[str, Any]]
    """Each a ``SessionConfigOption`` (select or boolean), kept as sent."""


class SessionInfoUpdate(_Wire, frozen=True, kw_only=True):
    title: str | None = None
    updated_at: str | None = None


class Cost(_Wire, frozen=True, kw_only=True):
    amount: float
    currency: str


class UsageUpdate(_Wire, frozen=True, kw_only=True):
    """``sessionUpdate: "usage_update"``: context window use, and cost so far."""

    used: int
    size: int
    cost: Cost | None = None


SESSION_UPDATE_TYPES: dict[str, type[_Wire]] = {
    "user_message_chunk": ContentChunk,
    "agent_message_chunk": ContentChunk,
    "agent_thought_chunk": ContentChunk,
    "tool_call": ToolCall,
    "tool_call_update": ToolCallUpdate,
    "plan": Plan,
    "available_commands_update": AvailableCommandsUpdate,
    "current_mode_update": CurrentModeUpdate,
    "config_option_update": ConfigOptionUpdate,
    "session_info_update": SessionInfoUpdate,
    "usage_update": UsageUpdate,
}
"""The type of each ``sessionUpdate`` kind of this schema version."""


class SessionNotification(_Wire, frozen=True, kw_only=True):
    """``session/update`` params; ``update`` is decoded by its ``sessionUpdate`` tag."""

    session_id: str
    update: msgspec.Raw


# Permissions -----------------------------------------------------------------------


class PermissionOption(_Wire, frozen=True, kw_only=True):
    option_id: str
    name: str
    kind: Literal["allow_once", "allow_always", "reject_once", "reject_always"] | str


class RequestPermissionRequest(_Wire, frozen=True, kw_only=True):
    session_id: str
    tool_call: ToolCallUpdate
    options: list[PermissionOption]


class _Outcome(_Wire, frozen=True, kw_only=True, tag_field="outcome"):
    pass


class SelectedPermissionOutcome(_Outcome, frozen=True, kw_only=True, tag="selected"):
    option_id: str


class CancelledPermissionOutcome(_Outcome, frozen=True, kw_only=True, tag="cancelled"):
    pass


RequestPermissionOutcome = SelectedPermissionOutcome | CancelledPermissionOutcome


class RequestPermissionResponse(_Wire, frozen=True, kw_only=True):
    outcome: RequestPermissionOutcome


# File system -----------------------------------------------------------------------


class ReadTextFileRequest(_Wire, frozen=True, kw_only=True):
    session_id: str
    path: str
    line: int | None = None
    """1-based first line."""
    limit: int | None = None
    """At most this many lines."""


class ReadTextFileResponse(_Wire, frozen=True, kw_only=True):
    content: str


class WriteTextFileRequest(_Wire, frozen=True, kw_only=True):
    session_id: str
    path: str
    content: str


# Terminals -------------------------------------------------------------------------


class EnvVariable(_Wire, frozen=True, kw_only=True):
    name: str
    value: str


class CreateTerminalRequest(_Wire, frozen=True, kw_only=True):
    session_id: str
    command: str
    args: list[str] = []
    env: list[EnvVariable] = []
    cwd: str | None = None
    output_byte_limit: int | None = None


class CreateTerminalResponse(_Wire, frozen=True, kw_only=True):
    terminal_id: str


class TerminalOutputRequest(_Wire, frozen=True, kw_only=True):
    session_id: str
    terminal_id: str


class TerminalExitStatus(_Wire, frozen=True, kw_only=True):
    exit_code: int | None = None
    signal: str | None = None


class TerminalOutputResponse(_Wire, frozen=True, kw_only=True):
    output: str
    truncated: bool
    exit_status: TerminalExitStatus | None = None


class WaitForTerminalExitRequest(_Wire, frozen=True, kw_only=True):
    session_id: str
    terminal_id: str


class WaitForTerminalExitResponse(_Wire, frozen=True, kw_only=True):
    exit_code: int | None = None
    signal: str | None = None


class KillTerminalRequest(_Wire, frozen=True, kw_only=True):
    session_id: str
    terminal_id: str


class ReleaseTerminalRequest(_Wire, frozen=True, kw_only=True):
    session_id: str
    terminal_id: str


# Initialization and sessions -------------------------------------------------------


class FileSystemCapabilities(_Wire, frozen=True, kw_only=True, omit_defaults=False):
    read_text_file: bool = False
    write_text_file: bool = False


class ClientCapabilities(_Wire, frozen=True, kw_only=True, omit_defaults=False):
    """Sent with every member, ``false`` included: exactly what the client implements."""

    fs: FileSystemCapabilities = FileSystemCapabilities()
    terminal: bool = False


class Implementation(_Wire, frozen=True, kw_only=True):
    name: str
    title: str | None = None
    version: str = ""


class InitializeRequest(_Wire, frozen=True, kw_only=True):
    protocol_version: int
    client_capabilities: ClientCapabilities
    client_info: Implementation | None = None


class PromptCapabilities(_Wire, frozen=True, kw_only=True):
    image: bool = False
    audio: bool = False
    embedded_context: bool = False


class McpCapabilities(_Wire, frozen=True, kw_only=True):
    http: bool = False
    sse: bool = False


class SessionCapabilities(_Wire, frozen=True, kw_only=True):
    """Each optional method is supported when its member is present (an object)."""

    list: dict[str, Any] | None = None
    additional_directories: dict[str, Any] | None = None
    resume: dict[str, Any] | None = None
    close: dict[str, Any] | None = None
    fork: dict[str, Any] | None = None
    delete: dict[str, Any] | None = None


class AgentCapabilities(_Wire, frozen=True, kw_only=True):
    load_session: bool = False
    prompt_capabilities: PromptCapabilities = PromptCapabilities()
    mcp_capabilities: McpCapabilities = McpCapabilities()
    session_capabilities: SessionCapabilities = SessionCapabilities()


class AuthMethod(_Wire, frozen=True, kw_only=True):
    id: str
    name: str
    description: str | None = None
    type: str | None = None
    """``env_var``, ``terminal``, or absent (the agent handles it)."""


class InitializeResponse(_Wire, frozen=True, kw_only=True):
    protocol_version: int
    agent_capabilities: AgentCapabilities = AgentCapabilities()
    auth_methods: list[AuthMethod] = []
    agent_info: Implementation | None = None


class AuthenticateRequest(_Wire, frozen=True, kw_only=True):
    method_id: str


class HttpHeader(_Wire, frozen=True, kw_only=True):
    name: str
    value: str


class McpServerStdio(_Wire, frozen=True, kw_only=True, omit_defaults=False):
    """A stdio MCP server (no ``type`` for this one upstream). ``args`` and ``env`` are
    required upstream, so they are always sent (Gemini CLI rejects a server without)."""

    name: str
    command: str
    args: list[str] = []
    env: list[EnvVariable] = []


class McpServerHttp(_Wire, frozen=True, kw_only=True, omit_defaults=False):
    type: Literal["http"] = "http"
    name: str
    url: str
    headers: list[HttpHeader] = []


class McpServerSse(_Wire, frozen=True, kw_only=True, omit_defaults=False):
    type: Literal["sse"] = "sse"
    name: str
    url: str
    headers: list[HttpHeader] = []


McpServer = McpServerStdio | McpServerHttp | McpServerSse
"""Sent only (the stdio variant has no tag, so this union is not decodable)."""


class NewSessionRequest(_Wire, frozen=True, kw_only=True):
    cwd: str
    mcp_servers: list[Any]
    """`McpServer` values (required, may be empty)."""
    additional_directories: list[str] | None = None


class SessionMode(_Wire, frozen=True, kw_only=True):
    id: str
    name: str = ""
    description: str | None = None


class SessionModeState(_Wire, frozen=True, kw_only=True):
    current_mode_id: str
    available_modes: list[SessionMode] = []


class ModelInfo(_Wire, frozen=True, kw_only=True):
    """Unstable upstream (Gemini CLI sends it)."""

    model_id: str
    name: str = ""
    description: str | None = None


class SessionModelState(_Wire, frozen=True, kw_only=True):
    """Unstable upstream (Gemini CLI sends it)."""

    current_model_id: str
    available_models: list[ModelInfo] = []


class NewSessionResponse(_Wire, frozen=True, kw_only=True):
    session_id: str
    modes: SessionModeState | None = None
    models: SessionModelState | None = None
    config_options: list[dict[str, Any]] | None = None


class LoadSessionRequest(_Wire, frozen=True, kw_only=True):
    session_id: str
    cwd: str
    mcp_servers: list[Any]
    additional_directories: list[str] | None = None


class LoadSessionResponse(_Wire, frozen=True, kw_only=True):
    modes: SessionModeState | None = None
    models: SessionModelState | None = None
    config_options: list[dict[str, Any]] | None = None


class ListSessionsRequest(_Wire, frozen=True, kw_only=True):
    cwd: str | None = None
    cursor: str | None = None


class SessionInfo(_Wire, frozen=True, kw_only=True):
    session_id: str
    cwd: str
    additional_directories: list[str] | None = None
    title: str | None = None
    updated_at: str | None = None


class ListSessionsResponse(_Wire, frozen=True, kw_only=True):
    sessions: list[SessionInfo]
    next_cursor: str | None = None


class PromptRequest(_Wire, frozen=True, kw_only=True):
    session_id: str
    prompt: list[ContentBlock]


class Usage(_Wire, frozen=True, kw_only=True):
    total_tokens: int
    input_tokens: int
    output_tokens: int
    thought_tokens: int | None = None
    cached_read_tokens: int | None = None
    cached_write_tokens: int | None = None


StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]


class PromptResponse(_Wire, frozen=True, kw_only=True):
    stop_reason: StopReason | str
    usage: Usage | None = None


class CancelNotification(_Wire, frozen=True, kw_only=True):
    session_id: str


class SetSessionModeRequest(_Wire, frozen=True, kw_only=True):
    session_id: str
    mode_id: str


class SetSessionModelRequest(_Wire, frozen=True, kw_only=True):
    """Unstable upstream (``session/set_model``; Gemini CLI has it)."""

    session_id: str
    model_id: str


class SetSessionConfigOptionRequest(_Wire, frozen=True, kw_only=True):
    session_id: str
    config_id: str
    value: Any
