"""How to run an ACP agent (`AcpOptions`), and what a turn of it ends with (`AcpTurnResult`)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import msgspec
from msgspec import UNSET

from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES
from gemwire.runners.acp.asking import asking_launch
from gemwire.runners.acp.permissions import PermissionPreset
from gemwire.runners.acp.process_channel import AgentLaunch
from gemwire.runners.turn_result import TurnResult
from gemwire.wire import acp

__all__ = ("DEFAULT_REQUEST_TIMEOUT", "AcpOptions", "AcpTurnResult", "McpServer", "Prompt")

DEFAULT_REQUEST_TIMEOUT = 300.0
"""Seconds an agent has to answer ``initialize``, ``authenticate``, ``session/new``,
``session/load`` and the other requests that are not a turn."""

Prompt = str | Sequence[acp.ContentBlock]
"""A prompt: text, or ACP content blocks (text, resource links, embedded resources,
images; whichever the agent's ``promptCapabilities`` allow)."""

McpServer = acp.McpServerStdio | acp.McpServerHttp | acp.McpServerSse


class AcpOptions(msgspec.Struct, frozen=True, kw_only=True):
    """How to run an ACP agent. ``command`` is required unless the client is given a
    channel (`AcpClient`'s ``channel``).

    ``command``, ``cwd`` (as the process's folder), ``env`` and ``inherit_env`` make the
    `launch` of the agent process; ``cwd`` is also the sessions' default folder. ``env`` is added to the current environment (unless ``inherit_env`` is false); the
    agent's terminals get the same environment plus what the agent asks for.
    ``permissions`` is the preset that answers permission requests unless the client is
    given a handler. ``serve_reads`` offers ``fs/read_text_file`` (off by default: with it
    on, Gemini CLI cannot create new files, docs/acp.md explains why); ``serve_writes``
    offers ``fs/write_text_file``. ``auth_method`` authenticates right after
    ``initialize`` (and again when the agent answers "auth required").
    """

    command: tuple[str, ...] = ()
    cwd: str | None = None
    include_directories: tuple[str, ...] = ()
    """More folders of each session (ACP ``additionalDirectories``); the client serves
    files in them too. The same name as `GeminiOptions.include_directories`."""
    additional_directories: tuple[str, ...] = ()
    """Deprecated alias of ``include_directories``."""
    mcp_servers: tuple[McpServer, ...] = ()
    env: dict[str, str] = {}
    inherit_env: bool = True
    """``False``: ``env`` is the agent's whole environment, not added to this process's."""
    permissions: PermissionPreset = "deny"
    allow_always: bool = False
    """Let the preset pick ``allow_always`` options over ``allow_once``."""
    serve_reads: bool = False
    serve_writes: bool = True
    auth_method: str | None = None
    load_session: str | None = None
    """`run_acp` loads this session (its history replayed) instead of starting a new one."""
    resume_session: str | None = None
    """`run_acp` continues this session instead of starting a new one: by
    ``session/resume`` where the agent offers it (no history replayed), else by
    ``session/load`` (`AcpClient.continue_session`)."""
    mode: str | None = None
    """The client puts every session it opens, loads, resumes or forks in this mode. Given,
    it overrides the asking mode gemwire otherwise puts every session in when the answers
    are not "allow everything" (`asking`): the agent then asks only as this mode does, and
    an agent gemwire does not know the modes of is run (not refused)."""
    model: str | None = None
    """`run_acp` sets this model before the prompt."""
    timeout: float | None = None
    """Seconds for each turn; then it is cancelled and ends with error kind ``timeout``
    (the Gemini runner's ``timeout`` bounds its one turn the same way)."""
    request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT
    """Seconds for each request that is not a turn (``initialize``, ``session/new``, ...);
    then it raises `RunTimedOut`."""
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES

    def __post_init__(self) -> None:
        if self.additional_directories:
            warnings.warn(
                "AcpOptions.additional_directories is deprecated: use include_directories",
                DeprecationWarning,
                stacklevel=3,
            )
            merged = (*self.include_directories, *self.additional_directories)
            msgspec.structs.force_setattr(self, "include_directories", merged)
            msgspec.structs.force_setattr(self, "additional_directories", ())

    @property
    def launch(self) -> AgentLaunch:
        """What starts the agent process (`ProcessChannel`): for an agent that has no mode
        that asks, with what makes it ask (`asking.asking_launch`)."""
        return asking_launch(
            AgentLaunch(
                command=self.command, cwd=self.cwd, env=self.env, inherit_env=self.inherit_env
            )
        )

    def environment(self) -> dict[str, str]:
        """The agent's environment: this process's (unless ``inherit_env`` is false) and
        ``env``; its terminals start from it too."""
        return self.launch.environment()

    def client_capabilities(
        self, *, terminal: bool, elicitation: bool = False
    ) -> acp.ClientCapabilities:
        """What the client offers in ``initialize``: the file methods these options serve,
        terminals when it has a terminal policy, elicitation (forms and URLs) when it has
        an elicitation handler, boolean config options (``set_config_option`` sets
        them), and the unstable updates gemwire maps to events (``notice``, compaction,
        plans by id): an agent sends each only to a client that declares it, and without
        them Claude's notices and Codex's plans arrive as answer text (docs/acp.md)."""
        fs = acp.FileSystemCapabilities(
            read_text_file=self.serve_reads, write_text_file=self.serve_writes
        )
        session = acp.ClientSessionCapabilities(
            config_options=acp.SessionConfigOptionsCapabilities(boolean={}),
            notices={},
            compaction={},
        )
        asks = acp.ElicitationCapabilities(form={}, url={}) if elicitation else UNSET
        return acp.ClientCapabilities(
            fs=fs, terminal=terminal, session=session, plan={}, elicitation=asks
        )


class AcpTurnResult(TurnResult, frozen=True, kw_only=True):
    """How a turn ended. The partial answer and usage survive every failure."""

    session_id: str
