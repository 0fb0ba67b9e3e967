"""An eval's attempts as ATIF trajectories: Harbor's Agent Trajectory Interchange Format.

    paths = export_atif("out", "out/atif")     # out/atif/<attempt>.json, one per attempt

ATIF v1.4 (Harbor's RFC 0001): a root object with the ``agent``, ordered ``steps`` and
``final_metrics``. gemwire's events stay the native form; a trajectory is drawn from them:

- a ``user_message`` is a ``user`` step;
- an ``agent`` step is a model response: its text (``message``), its thoughts
  (``reasoning_content``), the tool calls it made (``tool_calls``) and what they returned
  (``observation``); text or thoughts after a tool call begin the next step;
- ``final_metrics`` holds the attempt's tokens and cost (what the agent reported, in USD,
  else gemwire's estimate) and ``extra`` the eval's own: task, attempt, reward, grade.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import msgspec

from gemwire.batch.output import read_results
from gemwire.batch.results import TaskResult
from gemwire.errors import BatchOutputError
from gemwire.events import (
    Event,
    MessageDelta,
    SessionStarted,
    ThoughtDelta,
    ToolCallFinished,
    ToolCallStarted,
    UserMessage,
    decode_event,
)
from gemwire.protocol._undecodable import UNDECODABLE, why_undecodable

__all__ = ("SCHEMA_VERSION", "Trajectory", "export_atif", "trajectory")

SCHEMA_VERSION = "ATIF-v1.4"


class _Atif(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    pass


class Agent(_Atif, frozen=True, kw_only=True):
    name: str
    version: str
    model_name: str | None = None


class ToolCall(_Atif, frozen=True, kw_only=True):
    tool_call_id: str
    function_name: str
    arguments: dict[str, Any]


class ObservationResult(_Atif, frozen=True, kw_only=True):
    source_call_id: str | None = None
    content: str | None = None


class Observation(_Atif, frozen=True, kw_only=True):
    results: list[ObservationResult]


class Step(_Atif, frozen=True, kw_only=True):
    step_id: int
    source: Literal["system", "user", "agent"]
    message: str
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] | None = None
    observation: Observation | None = None


class FinalMetrics(_Atif, frozen=True, kw_only=True):
    total_prompt_tokens: int | None = None
    total_completion_tokens: int | None = None
    total_cached_tokens: int | None = None
    total_cost_usd: float | None = None
    total_steps: int


class Trajectory(_Atif, frozen=True, kw_only=True):
    schema_version: str
    session_id: str
    agent: Agent
    steps: list[Step]
    notes: str | None = None
    final_metrics: FinalMetrics
    extra: dict[str, Any]


class _Turn:
    """An agent step being gathered."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.thoughts: list[str] = []
        self.calls: list[ToolCall] = []
        self.results: list[ObservationResult] = []

    def step(self, step_id: int) -> Step:
        return Step(
            step_id=step_id,
            source="agent",
            message="".join(self.text),
            reasoning_content="".join(self.thoughts) or None,
            tool_calls=self.calls or None,
            observation=Observation(results=self.results) if self.results else None,
        )


def trajectory(result: TaskResult, events: Iterable[Event]) -> Trajectory:
    """The ATIF trajectory of one attempt: its result and its events."""
    steps: list[Step | _Turn] = []
    turn: _Turn | None = None
    holder: dict[str, _Turn] = {}  # a call's step, where its result goes
    agent = Agent(name=result.agent, version="unknown")
    for event in events:
        if isinstance(event, SessionStarted):
            agent = Agent(
                name=result.agent, version=event.agent_version or "unknown", model_name=event.model
            )
        elif isinstance(event, UserMessage):
            turn = None
            steps.append(Step(step_id=0, source="user", message=event.text))
        elif isinstance(event, (MessageDelta, ThoughtDelta, ToolCallStarted)):
            if turn is None or (turn.calls and not isinstance(event, ToolCallStarted)):
                turn = _Turn()
                steps.append(turn)
            if isinstance(event, MessageDelta):
                turn.text.append(event.text)
            elif isinstance(event, ThoughtDelta):
                turn.thoughts.append(event.text)
            else:
                turn.calls.append(
                    ToolCall(
                        tool_call_id=event.call_id, function_name=event.name, arguments=event.input
                    )
                )
                holder[event.call_id] = turn
        elif isinstance(event, ToolCallFinished) and event.call_id in holder:
            content = event.output if event.error is None else event.error.message
            holder[event.call_id].results.append(
                ObservationResult(source_call_id=event.call_id, content=content or event.status)
            )
    numbered = [
        s.step(n) if isinstance(s, _Turn) else msgspec.structs.replace(s, step_id=n)
        for n, s in enumerate(steps, 1)
    ]
    return Trajectory(
        schema_version=SCHEMA_VERSION,
        session_id=result.session_id or result.task_id,
        agent=agent,
        steps=numbered,
        notes=f"{result.error.kind}: {result.error.message}" if result.error else None,
        final_metrics=_metrics(result, len(numbered)),
        extra=_extra(result),
    )


def _metrics(result: TaskResult, steps: int) -> FinalMetrics:
    usage = result.usage
    cost = (
        result.agent_cost.amount
        if result.agent_cost and result.agent_cost.currency == "USD"
        else None
    )
    if cost is None and usage is not None and isinstance(usage.cost_usd, float):
        cost = usage.cost_usd
    return FinalMetrics(
        total_prompt_tokens=usage.input_tokens if usage else None,
        total_completion_tokens=usage.output_tokens if usage else None,
        total_cached_tokens=usage.cached_tokens if usage else None,
        total_cost_usd=cost,
        total_steps=steps,
    )


def _extra(result: TaskResult) -> dict[str, Any]:
    task_id, _, attempt = result.task_id.rpartition(".")
    grade = result.grade
    return {
        "gemwire": {
            "attempt_id": result.task_id,
            "task_id": task_id.rpartition(".")[0],
            "attempt": int(attempt) if attempt.isdigit() else None,
            "ok": result.ok,
            "error_kind": result.error_kind,
            "reward": grade.reward if grade else None,
            "grade_status": grade.status if grade else None,
            "duration_s": result.duration_s,
            "files_changed": [f.path for f in result.files_changed],
        }
    }


def export_atif(output: str | Path, folder: str | Path) -> list[Path]:
    """Write each finished attempt of the eval in ``output`` as ``folder/<attempt>.json``."""
    folder = Path(folder)
    written = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for result in read_results(output):
            log = Path(output, "events", f"{result.task_id}.jsonl")
            lines = log.read_bytes().splitlines() if log.is_file() else []
            events = [decode_event(line) for line in lines if line.strip()]
            path = folder / f"{result.task_id}.json"
            path.write_bytes(msgspec.json.format(msgspec.json.encode(trajectory(result, events))))
            written.append(path)
    except OSError as exc:
        raise BatchOutputError(f"cannot export to {folder}: {exc.strerror or exc}") from exc
    except UNDECODABLE as exc:
        why = why_undecodable(exc)
        raise BatchOutputError(f"an events file of {output} is damaged: {why}") from exc
    return written
