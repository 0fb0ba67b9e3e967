"""``initialize`` and ``authenticate``: capabilities both sides declare, and auth methods."""

from __future__ import annotations

from msgspec import UNSET, UnsetType

from gemwire.wire.acp._base import AcpStruct, JsonValue

__all__ = (
    "AgentAuthCapabilities",
    "AgentCapabilities",
    "AuthCapabilities",
    "AuthMethod",
    "AuthenticateRequest",
    "ClientCapabilities",
    "ClientSessionCapabilities",
    "ElicitationCapabilities",
    "FileSystemCapabilities",
    "Implementation",
    "InitializeRequest",
    "InitializeResponse",
    "McpCapabilities",
    "PromptCapabilities",
    "SessionCapabilities",
    "SessionConfigOptionsCapabilities",
)


class FileSystemCapabilities(AcpStruct, frozen=True, kw_only=True, omit_defaults=False):
    read_text_file: bool = False
    write_text_file: bool = False


class AuthCapabilities(AcpStruct, frozen=True, kw_only=True, omit_defaults=False):
    terminal: bool = False
    """The client can run an agent's ``terminal`` auth method (its program, interactively)."""


class SessionConfigOptionsCapabilities(AcpStruct, frozen=True, kw_only=True):
    boolean: dict[str, JsonValue] | None = None
    """Present: the client shows ``type: "boolean"`` config options."""


class ClientSessionCapabilities(AcpStruct, frozen=True, kw_only=True):
    config_options: SessionConfigOptionsCapabilities | None = None
    notices: dict[str, JsonValue] | None = None
    """Unstable: present, the client shows ``notice`` updates (an agent that gets no such
    capability sends its notices as answer text instead)."""
    compaction: dict[str, JsonValue] | None = None
    """Unstable: present, the client takes ``compaction_update`` and
    ``compaction_summary_chunk`` (the whole contract)."""


class ElicitationCapabilities(AcpStruct, frozen=True, kw_only=True):
    """Each mode the client can ask the user in is present (an object)."""

    form: dict[str, JsonValue] | None = None
    url: dict[str, JsonValue] | None = None


class ClientCapabilities(AcpStruct, frozen=True, kw_only=True, omit_defaults=False):
    """Sent with every member, ``false`` included: exactly what the client implements.

    The members added since schema 1.19 (``session``, ``plan``, ``subagents``, ``auth``,
    ``elicitation``) are sent only when set: an unset member is not in the JSON at all."""

    fs: FileSystemCapabilities = FileSystemCapabilities()
    terminal: bool = False
    session: ClientSessionCapabilities | UnsetType | None = UNSET
    plan: dict[str, JsonValue] | UnsetType | None = UNSET
    """Unstable: present, the client takes ``plan_update`` and ``plan_removed`` (plans by
    id; Codex then sends its plan there, not as answer text)."""
    subagents: dict[str, JsonValue] | UnsetType | None = UNSET
    """Unstable: present, the client takes a subagent's own session traffic on the same
    connection (``subagent_update``, ``session_message``)."""
    auth: AuthCapabilities | UnsetType = UNSET
    elicitation: ElicitationCapabilities | UnsetType | None = UNSET


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

    list: dict[str, JsonValue] | None = None
    additional_directories: dict[str, JsonValue] | None = None
    resume: dict[str, JsonValue] | None = None
    close: dict[str, JsonValue] | None = None
    fork: dict[str, JsonValue] | None = None
    delete: dict[str, JsonValue] | None = None


class AgentAuthCapabilities(AcpStruct, frozen=True, kw_only=True):
    logout: dict[str, JsonValue] | None = None
    """Present: the agent has ``logout``."""


class AgentCapabilities(AcpStruct, frozen=True, kw_only=True):
    load_session: bool = False
    prompt_capabilities: PromptCapabilities = PromptCapabilities()
    mcp_capabilities: McpCapabilities = McpCapabilities()
    session_capabilities: SessionCapabilities = SessionCapabilities()
    auth: AgentAuthCapabilities = AgentAuthCapabilities()


class AuthMethod(AcpStruct, frozen=True, kw_only=True):
    id: str
    name: str
    description: str | None = None
    type: str | None = None
    """``env_var``, ``terminal``, or absent (the agent handles it)."""
    args: list[str] | None = None
    """``terminal``: the arguments to run the agent's program with for the login."""
    env: dict[str, str] | None = None
    """``terminal``: environment variables to set for the login."""


class InitializeResponse(AcpStruct, frozen=True, kw_only=True):
    protocol_version: int
    agent_capabilities: AgentCapabilities = AgentCapabilities()
    auth_methods: list[AuthMethod] = []
    agent_info: Implementation | None = None


class AuthenticateRequest(AcpStruct, frozen=True, kw_only=True):
    method_id: str
