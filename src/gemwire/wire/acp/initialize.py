"""``initialize`` and ``authenticate``: capabilities both sides declare, and auth methods."""

from __future__ import annotations

from typing import Any

from gemwire.wire.acp._base import AcpStruct

__all__ = (
    "AgentCapabilities",
    "AuthMethod",
    "AuthenticateRequest",
    "ClientCapabilities",
    "FileSystemCapabilities",
    "Implementation",
    "InitializeRequest",
    "InitializeResponse",
    "McpCapabilities",
    "PromptCapabilities",
    "SessionCapabilities",
)


class FileSystemCapabilities(AcpStruct, frozen=True, kw_only=True, omit_defaults=False):
    read_text_file: bool = False
    write_text_file: bool = False


class ClientCapabilities(AcpStruct, frozen=True, kw_only=True, omit_defaults=False):
    """Sent with every member, ``false`` included: exactly what the client implements."""

    fs: FileSystemCapabilities = FileSystemCapabilities()
    terminal: bool = False


class Implementation(AcpStruct, frozen=True, kw_only=True):
    name: str
    title: str | None = None
    version: str = ""


class InitializeRequest(AcpStruct, frozen=True, kw_only=True):
    protocol_version: int
    client_capabilities: ClientCapabilities
    client_info: Implementation | None = None


class PromptCapabilities(AcpStruct, frozen=True, kw_only=True):
    image: bool = False
    audio: bool = False
    embedded_context: bool = False


class McpCapabilities(AcpStruct, frozen=True, kw_only=True):
    http: bool = False
    sse: bool = False


class SessionCapabilities(AcpStruct, frozen=True, kw_only=True):
    """Each optional method is supported when its member is present (an object)."""

    list: dict[str, Any] | None = None
    additional_directories: dict[str, Any] | None = None
    resume: dict[str, Any] | None = None
    close: dict[str, Any] | None = None
    fork: dict[str, Any] | None = None
    delete: dict[str, Any] | None = None


class AgentCapabilities(AcpStruct, frozen=True, kw_only=True):
    load_session: bool = False
    prompt_capabilities: PromptCapabilities = PromptCapabilities()
    mcp_capabilities: McpCapabilities = McpCapabilities()
    session_capabilities: SessionCapabilities = SessionCapabilities()


class AuthMethod(AcpStruct, frozen=True, kw_only=True):
    id: str
    name: str
    description: str | None = None
    type: str | None = None
    """``env_var``, ``terminal``, or absent (the agent handles it)."""


class InitializeResponse(AcpStruct, frozen=True, kw_only=True):
    protocol_version: int
    agent_capabilities: AgentCapabilities = AgentCapabilities()
    auth_methods: list[AuthMethod] = []
    agent_info: Implementation | None = None


class AuthenticateRequest(AcpStruct, frozen=True, kw_only=True):
    method_id: str
