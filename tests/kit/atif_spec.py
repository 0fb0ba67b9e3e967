"""ATIF v1.4 as Harbor's RFC 0001 defines it, table by table, to check trajectories against.

Written from the RFC's tables (docs/rfcs/0001-trajectory-format.md of laude-institute/harbor),
not from gemwire's own structs: every object refuses fields the RFC does not list, a
*Required* field has no default, and `check` adds the RFC's rules a type cannot say
(step ids 1, 2, 3 ...; ``source`` one of three; agent-only fields on agent steps only; an
observation's ``source_call_id`` naming a tool call of its step; ISO 8601 timestamps).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

__all__ = ("check",)


class _Spec(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    pass


class AgentSchema(_Spec, kw_only=True):
    name: str
    version: str
    model_name: str | None = None
    extra: dict[str, Any] | None = None


class FinalMetricsSchema(_Spec, kw_only=True):
    total_prompt_tokens: int | None = None
    total_completion_tokens: int | None = None
    total_cached_tokens: int | None = None
    total_cost_usd: float | None = None
    total_steps: int | None = None
    extra: dict[str, Any] | None = None


class ToolCallSchema(_Spec, kw_only=True):
    tool_call_id: str
    function_name: str
    arguments: dict[str, Any]


class MetricsSchema(_Spec, kw_only=True):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    extra: dict[str, Any] | None = None


class SubagentTrajectoryRefSchema(_Spec, kw_only=True):
    session_id: str
    trajectory_path: str | None = None
    extra: dict[str, Any] | None = None


class ObservationResultSchema(_Spec, kw_only=True):
    source_call_id: str | None = None
    content: str | None = None
    subagent_trajectory_ref: list[SubagentTrajectoryRefSchema] | None = None


class ObservationSchema(_Spec, kw_only=True):
    results: list[ObservationResultSchema]


class StepObject(_Spec, kw_only=True):
    step_id: int
    timestamp: str | None = None
    source: str
    model_name: str | None = None
    reasoning_effort: str | float | None = None
    message: str
    reasoning_content: str | None = None
    tool_calls: list[ToolCallSchema] | None = None
    observation: ObservationSchema | None = None
    metrics: MetricsSchema | None = None
    extra: dict[str, Any] | None = None


class RootObject(_Spec, kw_only=True):
    schema_version: str
    session_id: str
    agent: AgentSchema
    steps: list[StepObject]
    notes: str | None = None
    final_metrics: FinalMetricsSchema | None = None
    extra: dict[str, Any] | None = None


_AGENT_ONLY = ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics")


def check(document: bytes) -> RootObject:
    """The trajectory in ``document``, or `AssertionError` (msgspec's `ValidationError` for
    a field the RFC does not allow) saying what breaks the RFC."""
    root = msgspec.json.decode(document, type=RootObject)
    assert root.schema_version == "ATIF-v1.4", root.schema_version
    assert [s.step_id for s in root.steps] == list(range(1, len(root.steps) + 1))
    for step in root.steps:
        assert step.source in ("system", "user", "agent"), step.source
        if step.source != "agent":
            assert all(getattr(step, f) is None for f in _AGENT_ONLY), step
        if step.timestamp is not None:
            datetime.fromisoformat(step.timestamp)  # Python 3.11 reads a "Z" too
        calls = {c.tool_call_id for c in step.tool_calls or ()}
        assert len(calls) == len(step.tool_calls or ())
        for result in step.observation.results if step.observation else ():
            assert result.source_call_id is None or result.source_call_id in calls, result
    return root
