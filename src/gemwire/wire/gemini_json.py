"""Gemini CLI ``--output-format json`` output, exactly as upstream names it.

From ``packages/core/src/output/types.ts`` (``JsonOutput``, ``JsonError``) and the
``SessionMetrics`` of ``packages/core/src/telemetry/uiTelemetry.ts``. Pinned to Gemini CLI
0.61.0 (``warnings`` is new there); 0.30.0 and 0.15.4 print subsets of the same shape.

On success the document is printed to stdout. On a fatal error 0.61.0 prints it to
**stderr** instead (``{"session_id", "error": {"type", "message", "code"}}``), once or,
for some errors, twice with the second copy prefixed by ``[ERROR] ``.
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType

__all__ = (
    "UPSTREAM_VERSION",
    "ApiMetrics",
    "FileMetrics",
    "JsonError",
    "JsonOutput",
    "ModelMetrics",
    "RoleMetrics",
    "SessionMetrics",
    "TokenMetrics",
    "ToolCallDecisions",
    "ToolCallStats",
    "ToolMetrics",
)

UPSTREAM_VERSION = "0.61.0"


class JsonError(msgspec.Struct, frozen=True, kw_only=True):
    type: str
    message: str
    code: str | int | UnsetType = UNSET


class TokenMetrics(msgspec.Struct, frozen=True, kw_only=True):
    input: int | UnsetType = UNSET  # 0.30+
    prompt: int
    candidates: int
    total: int
    cached: int
    thoughts: int
    tool: int


class ApiMetrics(msgspec.Struct, frozen=True, kw_only=True):
    totalRequests: int
    totalErrors: int
    totalLatencyMs: int
    errorsByType: dict[str, int] | UnsetType = UNSET  # 0.61


class RoleMetrics(msgspec.Struct, frozen=True, kw_only=True):
    totalRequests: int
    totalErrors: int
    totalLatencyMs: int
    tokens: TokenMetrics


class ModelMetrics(msgspec.Struct, frozen=True, kw_only=True):
    api: ApiMetrics
    tokens: TokenMetrics
    roles: dict[str, RoleMetrics] | UnsetType = UNSET  # 0.30+: main, utility_router, ...


class ToolCallDecisions(msgspec.Struct, frozen=True, kw_only=True):
    accept: int
    reject: int
    modify: int
    auto_accept: int | UnsetType = UNSET  # 0.30+


class ToolCallStats(msgspec.Struct, frozen=True, kw_only=True):
    count: int
    success: int
    fail: int
    durationMs: int
    decisions: ToolCallDecisions


class ToolMetrics(msgspec.Struct, frozen=True, kw_only=True):
    totalCalls: int
    totalSuccess: int
    totalFail: int
    totalDurationMs: int
    totalDecisions: ToolCallDecisions
    byName: dict[str, ToolCallStats]


class FileMetrics(msgspec.Struct, frozen=True, kw_only=True):
    totalLinesAdded: int
    totalLinesRemoved: int


class SessionMetrics(msgspec.Struct, frozen=True, kw_only=True):
    models: dict[str, ModelMetrics]
    tools: ToolMetrics
    files: FileMetrics | UnsetType = UNSET


class JsonOutput(msgspec.Struct, frozen=True, kw_only=True):
    session_id: str | UnsetType = UNSET
    response: str | UnsetType = UNSET
    stats: SessionMetrics | UnsetType = UNSET
    error: JsonError | UnsetType = UNSET
    warnings: list[str] | UnsetType = UNSET
