"""Claude Code's saved session records, exactly as upstream names them.

One JSON object a line in ``<config>/projects/<cwd with / as ->/<sessionId>.jsonl``, as
Claude Code 2.1.44 writes them inside ``@zed-industries/claude-code-acp`` 0.16.2 and Claude
Code 2.1.318 inside ``@agentclientprotocol/claude-agent-acp`` 0.101.0. Every line has a
``type``: ``user`` and ``assistant`` carry a ``message`` in the Anthropic Messages API's
shape (``content`` a string or a list of blocks: ``text``, ``thinking``, ``tool_use``,
``tool_result``); others (``queue-operation``, ``summary``, ``file-history-snapshot``,
``system``) carry their own fields and no message. An assistant response is written as one
record per content block, each with the same ``message.id`` and the usage so far.

Claude Code 2.1.318 adds record types of its own, each with its fields here:
``attachment`` (context given to the model: the environment, the date, the model's
identity, tool and skill listings, the system prompt's snapshot), ``api-request``,
``api-request-blob`` and ``api-request-shape`` (each request sent to the model, stored once
by hash), ``atis-latch``, ``last-prompt`` (the latest prompt and the leaf record),
``tools-used`` (the tools' names), ``cost-state`` (the session's cost in USD and tokens per
model, so far), and ``mode`` / ``permission-mode`` (the session's mode, its permission
mode).

A content block is one Struct with every block type's fields (``type`` says which are
set): an unknown block type decodes, not fails. ``toolUseResult`` is whatever the tool
returned (a string, a list of blocks, an object) and stays ``Any``. Records are not tracked
by the cyclic garbage collector (``gc=False``): they hold no reference cycles.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

__all__ = ("UPSTREAM_VERSION", "ContentBlock", "Message", "Record", "Usage")

UPSTREAM_VERSION = (
    "claude-code-acp 0.16.2 (Claude Code 2.1.44), claude-agent-acp 0.101.0 (Claude Code 2.1.318)"
)


class ContentBlock(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A block of a message's ``content``; ``type`` says which fields it has."""

    type: str
    text: str | UnsetType = UNSET
    """``text``."""
    thinking: str | UnsetType = UNSET
    """``thinking`` (with its ``signature``)."""
    signature: str | UnsetType = UNSET
    id: str | UnsetType = UNSET
    """``tool_use``: the call's id, the tool's ``name`` and its ``input``."""
    name: str | UnsetType = UNSET
    input: dict[str, Any] | UnsetType = UNSET
    tool_use_id: str | UnsetType = UNSET
    """``tool_result``: the call it answers, its ``content`` (a string or blocks), and
    ``is_error``."""
    content: Any = UNSET
    is_error: bool | UnsetType = UNSET


class Usage(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """An assistant message's ``usage`` (the Messages API's)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int | None = 0
    cache_read_input_tokens: int | None = 0
    # Claude Code 2.1.318's, as the API sent them.
    cache_creation: Any = UNSET
    output_tokens_details: Any = UNSET
    server_tool_use: Any = UNSET
    service_tier: Any = UNSET
    inference_geo: Any = UNSET
    iterations: Any = UNSET
    speed: Any = UNSET
    fallback_credit: Any = UNSET


class Message(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A record's ``message``: the user's (a prompt, tool results) or the model's."""

    role: str
    content: str | list[ContentBlock]
    id: str | UnsetType = UNSET
    type: str | UnsetType = UNSET
    model: str | UnsetType = UNSET
    stop_reason: str | UnsetType | None = UNSET
    stop_sequence: str | UnsetType | None = UNSET
    stop_details: Any = UNSET
    usage: Usage | UnsetType = UNSET
    output_config: Any = UNSET
    """An ``api-request-blob``'s (the request's effort)."""


class Record(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One line of a session file."""

    type: str
    uuid: str | UnsetType = UNSET
    parentUuid: str | UnsetType | None = UNSET
    isSidechain: bool = False
    """A subagent's (``Task``) record (Claude Code 2.1.44 keeps them in the subagent's own file,
    ``<session>/subagents/agent-<agentId>.jsonl``)."""
    agentId: str | UnsetType = UNSET
    """The subagent a sidechain record is of; the parent's ``Task`` result names it too."""
    userType: str | UnsetType = UNSET
    cwd: str | UnsetType = UNSET
    sessionId: str | UnsetType = UNSET
    version: str | UnsetType = UNSET
    """Claude Code's version."""
    gitBranch: str | UnsetType = UNSET
    slug: str | UnsetType = UNSET
    timestamp: str | UnsetType = UNSET
    permissionMode: str | UnsetType = UNSET
    isMeta: bool | UnsetType = UNSET
    message: Message | UnsetType = UNSET
    toolUseResult: Any = UNSET
    sourceToolAssistantUUID: str | UnsetType = UNSET
    operation: str | UnsetType = UNSET
    """``queue-operation``: ``enqueue`` / ``dequeue`` of a prompt."""
    # Claude Code 2.1.318: the user's and the assistant's records. Its own fields are `Any`:
    # their shapes are Claude Code's to change, and a line must not become unreadable for one.
    entrypoint: Any = UNSET
    promptId: Any = UNSET
    origin: Any = UNSET
    promptSource: Any = UNSET
    turnOrigin: Any = UNSET
    turnPosition: Any = UNSET
    turnAttributionKey: Any = UNSET
    permissionDecision: Any = UNSET
    """A tool result's: how its permission was decided."""
    toolDenialKind: Any = UNSET
    sandboxed: Any = UNSET
    apiBlockIndex: Any = UNSET
    requestRef: Any = UNSET
    requestedModel: Any = UNSET
    promptCacheRequested: Any = UNSET
    effort: Any = UNSET
    perTurnEffort: Any = UNSET
    thinkingDisplay: Any = UNSET
    thinkingDurationMs: Any = UNSET
    isAbortedMidStream: Any = UNSET
    # ``attachment``
    attachment: Any = UNSET
    rendered: Any = UNSET
    renderedRole: Any = UNSET
    renderedBesideToolResult: Any = UNSET
    # ``api-request``, ``api-request-blob``, ``api-request-shape``
    id: Any = UNSET
    querySource: Any = UNSET
    shapeHash: Any = UNSET
    requestDigest: Any = UNSET
    params: Any = UNSET
    base: Any = UNSET
    tail: Any = UNSET
    keep: Any = UNSET
    cacheControl: Any = UNSET
    hash: Any = UNSET
    shape: Any = UNSET
    # ``atis-latch``, ``last-prompt``, ``tools-used``
    atis: Any = UNSET
    lastPrompt: Any = UNSET
    leafUuid: Any = UNSET
    tools: Any = UNSET
    # ``cost-state``: the session's so far
    totalCostUSD: Any = UNSET
    modelUsage: Any = UNSET
    hasUnknownModelCost: Any = UNSET
    totalAPIDuration: Any = UNSET
    totalAPIDurationWithoutRetries: Any = UNSET
    totalToolDuration: Any = UNSET
    totalDuration: Any = UNSET
    totalLinesAdded: Any = UNSET
    totalLinesRemoved: Any = UNSET
    startTime: Any = UNSET
    # ``mode`` (``permissionMode`` above is ``permission-mode``'s)
    mode: Any = UNSET
