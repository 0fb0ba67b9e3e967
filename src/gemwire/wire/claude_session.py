"""Claude Code's saved session records, exactly as upstream names them.

One JSON object a line in ``<config>/projects/<cwd with / as ->/<sessionId>.jsonl``, as
Claude Code 2.1.44 writes them inside ``@zed-industries/claude-code-acp`` 0.16.2 (the
version pinned in clis/). Every line has a ``type``: ``user`` and ``assistant`` carry a
``message`` in the Anthropic Messages API's shape (``content`` a string or a list of
blocks: ``text``, ``thinking``, ``tool_use``, ``tool_result``); others (``queue-operation``,
``summary``, ``file-history-snapshot``, ``system``) carry their own fields and no message.
An assistant response is written as one record per content block, each with the same
``message.id`` and the usage so far.

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

UPSTREAM_VERSION = "claude-code-acp 0.16.2 (Claude Code 2.1.44)"


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


class Message(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A record's ``message``: the user's (a prompt, tool results) or the model's."""

    role: str
    content: str | list[ContentBlock]
    id: str | UnsetType = UNSET
    type: str | UnsetType = UNSET
    model: str | UnsetType = UNSET
    stop_reason: str | UnsetType | None = UNSET
    stop_sequence: str | UnsetType | None = UNSET
    usage: Usage | UnsetType = UNSET


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
