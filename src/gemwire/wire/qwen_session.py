"""Qwen Code's saved session records, exactly as upstream names them.

One JSON object a line in ``<runtime>/projects/<cwd slug>/chats/<sessionId>.jsonl``, as Qwen
Code 0.24.4 (the version pinned in clis/) writes them (``ChatRecordingService``). Every line
has a ``type``: ``user`` (a prompt), ``assistant`` (a model response, with its ``model`` and
``usageMetadata``), ``tool_result`` (a tool's answer and its ``toolCallResult``) and
``system`` (``subtype`` says which: ``ui_telemetry``, ``file_history_snapshot``,
``branch_checkpoint``, ``chat_compression``, …). ``message`` is a Gemini API ``Content``
(``role`` and ``parts``), the one thing derived from Gemini CLI's format; Gemini CLI's own
session records (`gemwire.wire.gemini_session`) keep a different shape, so only the file
diff a tool shows (`FileDiff`) is shared.

A part is one Struct with every part kind's fields (which is set says which it is): an
unknown part decodes, not fails. ``resultDisplay`` is whatever the tool showed (a string, a
`FileDiff`, a shell result) and stays ``Any``. Records are not tracked by the cyclic garbage
collector (``gc=False``): they hold no reference cycles.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from gemwire.wire.gemini_session import FileDiff

__all__ = (
    "UPSTREAM_VERSION",
    "Content",
    "FileDiff",
    "FunctionCall",
    "FunctionResponse",
    "Part",
    "Record",
    "ToolCallResult",
    "UsageMetadata",
)

UPSTREAM_VERSION = "Qwen Code 0.24.4"


class FunctionCall(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A part's ``functionCall``: the model asks for a tool."""

    id: str | UnsetType = UNSET
    name: str
    args: dict[str, Any] = {}


class FunctionResponse(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A part's ``functionResponse``: what the model is told a tool returned (``output``
    or ``error`` in ``response``)."""

    id: str | UnsetType = UNSET
    name: str
    response: dict[str, Any] = {}


class Part(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One part of a ``Content``: text (a thought when ``thought``), a call or a response."""

    text: str | UnsetType = UNSET
    thought: bool | UnsetType = UNSET
    functionCall: FunctionCall | UnsetType = UNSET
    functionResponse: FunctionResponse | UnsetType = UNSET


class Content(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A record's ``message``: ``user`` (prompts, tool responses) or ``model``."""

    role: str
    parts: list[Part] = []


class UsageMetadata(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """An assistant record's ``usageMetadata`` (the Gemini API's names)."""

    promptTokenCount: int = 0
    candidatesTokenCount: int = 0
    thoughtsTokenCount: int = 0
    totalTokenCount: int = 0
    cachedContentTokenCount: int = 0
    toolUsePromptTokenCount: int = 0


class ToolCallResult(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A ``tool_result`` record's ``toolCallResult``: ``status`` is ``success``, ``error``
    or ``cancelled`` (a denied permission)."""

    callId: str | UnsetType = UNSET
    status: str | UnsetType = UNSET
    executionStatus: str | UnsetType = UNSET
    resultDisplay: Any = UNSET
    error: Any = UNSET
    errorType: str | UnsetType = UNSET


class Record(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One line of a session file."""

    type: str
    uuid: str | UnsetType = UNSET
    parentUuid: str | UnsetType | None = UNSET
    sessionId: str | UnsetType = UNSET
    timestamp: str | UnsetType = UNSET
    provenance: str | UnsetType = UNSET
    cwd: str | UnsetType = UNSET
    version: str | UnsetType = UNSET
    """Qwen Code's version."""
    gitBranch: str | UnsetType = UNSET
    model: str | UnsetType = UNSET
    message: Content | UnsetType = UNSET
    usageMetadata: UsageMetadata | UnsetType = UNSET
    contextWindowSize: int | UnsetType = UNSET
    toolCallResult: ToolCallResult | UnsetType = UNSET
    subtype: str | UnsetType = UNSET
    """``system``: which system record."""
    systemPayload: Any = UNSET
