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

One module per protocol area (``methods``, ``initialize``, ``sessions``, ``content``,
``tool_calls``, ``session_updates``, ``permissions``, ``fs``, ``terminals``); every type is
imported from here: ``from gemwire.wire import acp`` then ``acp.PromptRequest``.
"""

from __future__ import annotations

from gemwire.wire.acp.content import (
    Annotations,
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceContents,
    ResourceLink,
    TextContent,
)
from gemwire.wire.acp.fs import (
    ReadTextFileRequest,
    ReadTextFileResponse,
    WriteTextFileRequest,
)
from gemwire.wire.acp.initialize import (
    AgentCapabilities,
    AuthenticateRequest,
    AuthMethod,
    ClientCapabilities,
    FileSystemCapabilities,
    Implementation,
    InitializeRequest,
    InitializeResponse,
    McpCapabilities,
    PromptCapabilities,
    SessionCapabilities,
)
from gemwire.wire.acp.methods import (
    AGENT_METHODS,
    CLIENT_METHODS,
    PROTOCOL_VERSION,
    SCHEMA_VERSION,
)
from gemwire.wire.acp.permissions import (
    CancelledPermissionOutcome,
    PermissionOption,
    RequestPermissionOutcome,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SelectedPermissionOutcome,
)
from gemwire.wire.acp.session_updates import (
    SESSION_UPDATE_TYPES,
    AvailableCommand,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    ContentChunk,
    Cost,
    CurrentModeUpdate,
    Plan,
    PlanEntry,
    SessionInfoUpdate,
    SessionNotification,
    UsageUpdate,
)
from gemwire.wire.acp.sessions import (
    CancelNotification,
    HttpHeader,
    ListSessionsRequest,
    ListSessionsResponse,
    LoadSessionRequest,
    LoadSessionResponse,
    McpServer,
    McpServerHttp,
    McpServerSse,
    McpServerStdio,
    ModelInfo,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    SessionInfo,
    SessionMode,
    SessionModelState,
    SessionModeState,
    SetSessionConfigOptionRequest,
    SetSessionModelRequest,
    SetSessionModeRequest,
    Usage,
)
from gemwire.wire.acp.terminals import (
    CreateTerminalRequest,
    CreateTerminalResponse,
    EnvVariable,
    KillTerminalRequest,
    ReleaseTerminalRequest,
    TerminalExitStatus,
    TerminalOutputRequest,
    TerminalOutputResponse,
    WaitForTerminalExitRequest,
    WaitForTerminalExitResponse,
)
from gemwire.wire.acp.tool_calls import (
    Content,
    Diff,
    Terminal,
    ToolCall,
    ToolCallContent,
    ToolCallLocation,
    ToolCallUpdate,
)

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
