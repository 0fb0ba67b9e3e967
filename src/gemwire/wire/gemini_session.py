"""Gemini CLI's saved session records, exactly as upstream names them.

From ``packages/core/src/services/chatRecordingTypes.ts`` (``ConversationRecord``,
``MessageRecord``, ``ToolCallRecord``, ``TokensSummary``, the JSONL ``PartialMetadataRecord``,
``MetadataUpdateRecord`` and ``RewindRecord``), ``packages/core/src/tools/tools.ts``
(``FileDiff``, ``DiffStat``) and ``packages/core/src/config/projectRegistry.ts`` (the
``projects.json`` registry). Pinned to Gemini CLI 0.61.0; the single-JSON files of 0.30.0
and 0.15.4 use the same shapes (0.15.4 records no ``FileDiff`` and no ``kind``).

Where upstream types a field as a union of object shapes (``content`` is a ``PartListUnion``:
a string, a ``Part`` or a list of them; ``resultDisplay`` is a string, a ``FileDiff``, an
ANSI line array, a todo list or a subagent progress object) it stays ``Any`` here and the
readers look inside. Absent and ``null`` differ on disk, so optional fields default to
``UNSET``. A message and its parts are not tracked by the cyclic garbage collector
(``gc=False``): decoded records hold no reference cycles, and a 100 MB session holds hundreds
of thousands of them.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

__all__ = (
    "SESSION_CONTEXT_MESSAGE_ID",
    "SESSION_FILE_PREFIX",
    "UPSTREAM_VERSION",
    "ConversationRecord",
    "DiffStat",
    "FileDiff",
    "MessageRecord",
    "MetadataUpdateRecord",
    "PartialMetadataRecord",
    "ProjectRegistryData",
    "RewindRecord",
    "ThoughtSummary",
    "TokensSummary",
    "ToolCallRecord",
)

UPSTREAM_VERSION = "0.61.0"

SESSION_FILE_PREFIX = "session-"
"""Main sessions are ``chats/session-<YYYY-MM-DDTHH-MM>-<first 8 chars of the id>.json[l]``."""

SESSION_CONTEXT_MESSAGE_ID = "d04923d38bb0f6017037e74183378ef4"
"""The fixed id of the injected ``<session_context>`` user message (0.61.0)."""

MessageType = Literal["user", "gemini", "info", "error", "warning"]


class TokensSummary(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A model response's ``usageMetadata``: prompt, candidates, cached, thoughts, tool, total."""

    input: int
    output: int
    cached: int
    thoughts: int | UnsetType = UNSET
    tool: int | UnsetType = UNSET
    total: int


class ThoughtSummary(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A thought, split by Gemini into its bold subject line and the rest."""

    subject: str
    description: str
    timestamp: str | UnsetType = UNSET


class DiffStat(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    model_added_lines: int
    model_removed_lines: int
    model_added_chars: int
    model_removed_chars: int
    user_added_lines: int
    user_removed_lines: int
    user_added_chars: int
    user_removed_chars: int


class FileDiff(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What an edit tool did to a file (the ``resultDisplay`` of write_file and replace)."""

    fileDiff: str
    fileName: str
    filePath: str | UnsetType = UNSET
    originalContent: str | None
    newContent: str
    diffStat: DiffStat | UnsetType = UNSET
    isNewFile: bool | UnsetType = UNSET
    isBuildFile: bool | UnsetType = UNSET  # 0.61


class ToolCallRecord(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One tool call of a ``gemini`` message, with its result.

    ``status`` is a scheduler ``Status``: ``success``, ``error`` or ``cancelled`` once done.
    ``agentId`` names the subagent session an ``invoke_agent`` call ran (0.61).
    """

    id: str
    name: str
    args: dict[str, Any]
    result: Any = UNSET
    status: str
    timestamp: str
    agentId: str | UnsetType = UNSET
    displayName: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    resultDisplay: Any = UNSET
    renderOutputAsMarkdown: bool | UnsetType = UNSET


class MessageRecord(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A message: ``user``, ``gemini`` (the model), or an ``info``/``error``/``warning`` line.

    ``toolCalls``, ``thoughts``, ``tokens`` and ``model`` only occur on ``gemini`` messages.
    """

    id: str
    timestamp: str
    type: MessageType | str
    content: Any = UNSET
    displayContent: Any = UNSET
    toolCalls: list[ToolCallRecord] | UnsetType = UNSET
    thoughts: list[ThoughtSummary] | UnsetType = UNSET
    tokens: TokensSummary | UnsetType | None = UNSET
    model: str | UnsetType = UNSET


class ConversationRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A whole session: the single pretty-printed ``.json`` file (before 0.39)."""

    sessionId: str
    projectHash: str
    startTime: str | UnsetType = UNSET
    lastUpdated: str | UnsetType = UNSET
    messages: list[MessageRecord] = []
    summary: str | UnsetType = UNSET
    directories: list[str] | UnsetType = UNSET
    kind: Literal["main", "subagent"] | UnsetType = UNSET
    activeExtensionName: str | UnsetType = UNSET
    memoryScratchpad: Any = UNSET


class PartialMetadataRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A ``.jsonl`` header line; one is written at every start, so a file may hold several."""

    sessionId: str
    projectHash: str
    startTime: str | UnsetType = UNSET
    lastUpdated: str | UnsetType = UNSET
    summary: str | UnsetType = UNSET
    directories: list[str] | UnsetType = UNSET
    kind: Literal["main", "subagent"] | UnsetType = UNSET


class MetadataUpdateRecord(msgspec.Struct, frozen=True, kw_only=True):
    """``{"$set": {...}}``: a shallow metadata update; ``messages`` replaces the whole list."""

    set: dict[str, Any] = msgspec.field(name="$set")


class RewindRecord(msgspec.Struct, frozen=True, kw_only=True):
    """``{"$rewindTo": id}``: that message and every later one are gone (``/rewind``)."""

    rewindTo: str = msgspec.field(name="$rewindTo")


class ProjectRegistryData(msgspec.Struct, frozen=True, kw_only=True):
    """``~/.gemini/projects.json``: absolute project root -> slug folder (0.29 and newer)."""

    projects: dict[str, str]
