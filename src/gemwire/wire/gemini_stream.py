"""Gemini CLI ``--output-format stream-json`` events, exactly as upstream names them.

From ``packages/core/src/output/types.ts`` (``JsonStreamEvent``). Pinned to Gemini CLI
0.61.0; the shapes printed by 0.30.0 and 0.15.4 are covered too (the recorded corpus
decodes in strict mode for all three):

- ``StreamStats.cached`` / ``input``: 0.30 and newer (absent in 0.15.4);
- ``StreamStats.models``: 0.61.0 (absent before).

Absent and ``null`` are different things on this wire, so optional fields default to
``UNSET``.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

__all__ = (
    "UPSTREAM_VERSION",
    "ErrorEvent",
    "InitEvent",
    "JsonStreamEvent",
    "MessageEvent",
    "ModelStreamStats",
    "ResultEvent",
    "StreamStats",
    "ToolError",
    "ToolResultEvent",
    "ToolUseEvent",
)

UPSTREAM_VERSION = "0.61.0"


class ToolError(msgspec.Struct, frozen=True, kw_only=True):
    """The inline ``error: {type, message}`` of ``tool_result`` and ``result``."""

    type: str
    message: str


class ModelStreamStats(msgspec.Struct, frozen=True, kw_only=True):
    """One model's share of `StreamStats` (an inline type upstream; 0.61.0)."""

    total_tokens: int
    input_tokens: int
    output_tokens: int
    cached: int
    input: int


class StreamStats(msgspec.Struct, frozen=True, kw_only=True):
    total_tokens: int
    input_tokens: int
    output_tokens: int
    cached: int | UnsetType = UNSET
    input: int | UnsetType = UNSET
    duration_ms: int
    tool_calls: int
    models: dict[str, ModelStreamStats] | UnsetType = UNSET


class _BaseJsonStreamEvent(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    timestamp: str


class InitEvent(_BaseJsonStreamEvent, frozen=True, kw_only=True, tag="init"):
    session_id: str
    model: str


class MessageEvent(_BaseJsonStreamEvent, frozen=True, kw_only=True, tag="message"):
    role: Literal["user", "assistant"]
    content: str
    delta: bool | UnsetType = UNSET


class ToolUseEvent(_BaseJsonStreamEvent, frozen=True, kw_only=True, tag="tool_use"):
    tool_name: str
    tool_id: str
    parameters: dict[str, Any]


class ToolResultEvent(_BaseJsonStreamEvent, frozen=True, kw_only=True, tag="tool_result"):
    tool_id: str
    status: Literal["success", "error"]
    output: str | UnsetType = UNSET
    error: ToolError | UnsetType = UNSET


class ErrorEvent(_BaseJsonStreamEvent, frozen=True, kw_only=True, tag="error"):
    severity: Literal["warning", "error"]
    message: str


class ResultEvent(_BaseJsonStreamEvent, frozen=True, kw_only=True, tag="result"):
    status: Literal["success", "error"]
    error: ToolError | UnsetType = UNSET
    stats: StreamStats | UnsetType = UNSET


JsonStreamEvent = (
    InitEvent | MessageEvent | ToolUseEvent | ToolResultEvent | ErrorEvent | ResultEvent
)
