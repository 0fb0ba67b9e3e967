"""The client's requests to an ACP agent, typed: each `Call` knows the type its result
decodes to, and what the agent must have advertised for it.

    conn.send_call(initialize(acp.InitializeRequest(...)))  # its AgentResult holds an
                                                            # acp.InitializeResponse
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, TypeAlias, TypeVar, cast

from gemwire.errors import AgentRequestFailed
from gemwire.wire import acp
from gemwire.wire.jsonrpc import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND

__all__ = (
    "Call",
    "Json",
    "R",
    "advertises",
    "authenticate",
    "check_prompt",
    "check_protocol_version",
    "close_session",
    "delete_session",
    "fork_session",
    "initialize",
    "list_sessions",
    "load_session",
    "logout",
    "new_session",
    "prompt",
    "require_capability",
    "resume_session",
    "set_config_option",
    "set_mode",
    "set_model",
)

_A = acp.AGENT_METHODS

R = TypeVar("R")


class Call(Generic[R]):
    """One request of the client's and the type its result decodes to: the pending table
    keeps the type, so the answer comes back typed (``Call[acp.InitializeResponse]``)."""

    __slots__ = ("method", "params", "result_type")

    def __init__(self, method: str, params: object, result_type: type[R] | object) -> None:
        self.method = method
        self.params = params
        self.result_type = result_type

    def result_of(self, result: object) -> R:
        """The result of this call's `AgentResult`: the connection decoded it as
        ``result_type``, so it is an ``R``."""
        return cast(R, result)


Json: TypeAlias = bool | int | float | str | list["Json"] | dict[str, "Json"] | None
"""A result kept as plain JSON (these methods answer ``{}``, or ``null``, or a few fields)."""


def initialize(params: acp.InitializeRequest) -> Call[acp.InitializeResponse]:
    return Call(_A["initialize"], params, acp.InitializeResponse)


def authenticate(params: acp.AuthenticateRequest | dict[str, object]) -> Call[Json]:
    return Call[Json](_A["authenticate"], params, object)


def new_session(params: acp.NewSessionRequest) -> Call[acp.NewSessionResponse]:
    return Call(_A["session_new"], params, acp.NewSessionResponse)


def load_session(params: acp.LoadSessionRequest) -> Call[acp.LoadSessionResponse]:
    return Call(_A["session_load"], params, acp.LoadSessionResponse)


def resume_session(params: acp.ResumeSessionRequest) -> Call[acp.ResumeSessionResponse]:
    return Call(_A["session_resume"], params, acp.ResumeSessionResponse)


def close_session(params: acp.CloseSessionRequest) -> Call[Json]:
    return Call[Json](_A["session_close"], params, object)


def delete_session(params: acp.DeleteSessionRequest) -> Call[Json]:
    return Call[Json](_A["session_delete"], params, object)


def logout() -> Call[Json]:
    return Call[Json](_A["logout"], {}, object)


def fork_session(params: acp.ForkSessionRequest) -> Call[acp.ForkSessionResponse]:
    return Call(_A["session_fork"], params, acp.ForkSessionResponse)


def list_sessions(params: acp.ListSessionsRequest) -> Call[acp.ListSessionsResponse]:
    return Call(_A["session_list"], params, acp.ListSessionsResponse)


def prompt(params: acp.PromptRequest) -> Call[acp.PromptResponse]:
    return Call(_A["session_prompt"], params, acp.PromptResponse)


def set_mode(params: acp.SetSessionModeRequest) -> Call[Json]:
    return Call[Json](_A["session_set_mode"], params, object)


def set_model(params: acp.SetSessionModelRequest) -> Call[Json]:
    return Call[Json](_A["session_set_model"], params, object)


def set_config_option(params: acp.SetSessionConfigOptionRequest) -> Call[Json]:
    return Call[Json](_A["session_set_config_option"], params, object)


def check_protocol_version(response: acp.InitializeResponse) -> None:
    """Raise `AgentRequestFailed` (``-32600``, an error of kind ``protocol``) when the agent
    answers ``initialize`` with a protocol version gemwire does not speak: the spec says
    the client then closes the connection and tells the user.

    >>> check_protocol_version(acp.InitializeResponse(protocol_version=2))
    Traceback (most recent call last):
    ...
    gemwire.errors.AgentRequestFailed: the agent speaks ACP protocol version 2 (the v2 draft); \
gemwire speaks version 1 only: use a version of the agent that speaks ACP v1
    """
    version = response.protocol_version
    if version == acp.PROTOCOL_VERSION:
        return
    draft = " (the v2 draft)" if version == 2 else ""
    raise AgentRequestFailed(
        f"the agent speaks ACP protocol version {version}{draft}; gemwire speaks version "
        f"{acp.PROTOCOL_VERSION} only: use a version of the agent that speaks ACP v1",
        method=_A["initialize"],
        code=INVALID_REQUEST,
        data={"protocolVersion": version},
    )


def _advertises_load(capabilities: acp.AgentCapabilities) -> bool:
    return capabilities.load_session


def _advertises_list(capabilities: acp.AgentCapabilities) -> bool:
    return capabilities.session_capabilities.list is not None


def _advertises_resume(capabilities: acp.AgentCapabilities) -> bool:
    return capabilities.session_capabilities.resume is not None


def _advertises_close(capabilities: acp.AgentCapabilities) -> bool:
    return capabilities.session_capabilities.close is not None


def _advertises_delete(capabilities: acp.AgentCapabilities) -> bool:
    return capabilities.session_capabilities.delete is not None


def _advertises_logout(capabilities: acp.AgentCapabilities) -> bool:
    return capabilities.auth.logout is not None


def _advertises_fork(capabilities: acp.AgentCapabilities) -> bool:
    return capabilities.session_capabilities.fork is not None


_CAPABILITY_OF = {
    _A["session_load"]: _advertises_load,
    _A["session_list"]: _advertises_list,
    _A["session_resume"]: _advertises_resume,
    _A["session_close"]: _advertises_close,
    _A["session_delete"]: _advertises_delete,
    _A["session_fork"]: _advertises_fork,
    _A["logout"]: _advertises_logout,
}


def advertises(capabilities: acp.AgentCapabilities, method: str) -> bool:
    """The agent offers ``method``: one every agent has, or an optional one it advertised.

    >>> advertises(acp.AgentCapabilities(), "session/resume")
    False
    >>> resumable = acp.SessionCapabilities(resume={})
    >>> advertises(acp.AgentCapabilities(session_capabilities=resumable), "session/resume")
    True
    """
    advertised = _CAPABILITY_OF.get(method)
    return advertised is None or advertised(capabilities)


def require_capability(capabilities: acp.AgentCapabilities, method: str) -> None:
    """Raise `AgentRequestFailed` (``unsupported``) for an optional method the agent did
    not advertise in ``initialize``."""
    if not advertises(capabilities, method):
        raise AgentRequestFailed(
            f"the agent does not advertise {method}", method=method, code=METHOD_NOT_FOUND
        )


_BLOCK_CAPABILITY = {
    acp.ImageContent: "image",
    acp.AudioContent: "audio",
    acp.EmbeddedResource: "embedded_context",
}


def check_prompt(capabilities: acp.AgentCapabilities, blocks: Sequence[acp.ContentBlock]) -> None:
    """Raise `AgentRequestFailed` for a block the agent's ``promptCapabilities`` do not
    allow (text and resource links every agent takes)."""
    allowed = capabilities.prompt_capabilities
    for block in blocks:
        name = _BLOCK_CAPABILITY.get(type(block))
        if name is not None and not getattr(allowed, name):
            raise AgentRequestFailed(
                f"the agent does not accept {type(block).__name__} in prompts "
                f"(promptCapabilities.{name})",
                method=_A["session_prompt"],
                code=INVALID_PARAMS,
            )
