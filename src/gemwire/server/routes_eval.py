"""An eval's report over HTTP (docs/server.md): the figures of ``gemwire eval report
--json``, with each agent's pass rate and its interval and every attempt's verdict, for the
page's Batches view to draw as ``eval report --format html`` does.

    GET /v1/batches/{id}/report    `EvalReportView`

A batch is an eval when its output folder holds ``eval.json`` (`gemwire eval` writes it
before any attempt): a batch that is not one answers 200 with ``is_eval`` false and nothing
else, so the page can ask of every batch without an error. The results are the batch's own
(a folder opened read-only: read again, as ``GET /v1/batches/{id}`` does).
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Literal

import anyio
import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from gemwire.batch.eval import SETTINGS, parse_attempt_id
from gemwire.batch.eval_page import wilson
from gemwire.batch.eval_report import AgentReport, report
from gemwire.batch.results import TaskResult
from gemwire.errors import BatchOutputError
from gemwire.server.batches import ServerBatch
from gemwire.server.responses import ApiError, JsonResponse, NotFound
from gemwire.server.state import app_state

__all__ = ("ROUTES", "AttemptView", "EvalReportView", "EvalTaskRow", "PassRate")


class EvalTaskRow(msgspec.Struct, frozen=True, kw_only=True):
    """A task by an agent, as ``eval report --json``'s ``tasks`` (`eval_report.TaskRow`,
    named apart from the batch's own `TaskRow` in the OpenAPI document)."""

    task: str
    agent: str
    attempts: int
    graded: int
    passed: int
    reward_mean: float | None
    errors: dict[str, int]


class PassRate(msgspec.Struct, frozen=True, kw_only=True):
    """An agent's passes over its graded attempts, with the 95 % Wilson score interval
    (``null`` rate and bounds with no graded attempt)."""

    passed: int
    graded: int
    rate: float | None
    low: float | None
    high: float | None


class AttemptView(msgspec.Struct, frozen=True, kw_only=True):
    """One attempt: its batch task ``id`` (its events: ``/v1/batches/{id}/tasks/{id}/events``)."""

    id: str
    task: str
    agent: str
    attempt: int
    outcome: Literal["passed", "failed", "error"]
    """``error``: its verifier crashed or timed out (no reward). A task without ``verify``
    passes when its turn ended ok."""
    reward: float | None
    verify_status: str | None
    verify_output: str
    """The last 4 KiB of what the verifier wrote ("" without one)."""
    error_kind: str | None
    """The agent's error, if its turn failed (it is graded on what it left all the same)."""
    duration_s: float


class EvalReportView(msgspec.Struct, frozen=True, kw_only=True):
    """``GET /v1/batches/{id}/report``: ``agents`` and ``tasks`` are ``eval report
    --json``'s; ``pass_rates`` by agent; ``attempts`` sorted by task, agent and number."""

    batch: str
    is_eval: bool
    agents: dict[str, AgentReport]
    pass_rates: dict[str, PassRate]
    tasks: list[EvalTaskRow]
    attempts: list[AttemptView]


def _batch(request: Request) -> ServerBatch:
    manager = app_state(request).batches
    assert manager is not None, "the lifespan starts the batch manager"
    batch = manager.get(request.path_params["batch_id"])
    if batch is None:
        raise NotFound(f"no batch {request.path_params['batch_id']!r}")
    return batch


def _attempt(result: TaskResult) -> AttemptView:
    task, agent, number = parse_attempt_id(result.task_id)
    grade = result.grade
    outcome: Literal["passed", "failed", "error"]
    reward: float | None
    if grade is None:
        reward = 1.0 if result.ok else 0.0
        outcome = "passed" if result.ok else "failed"
    else:
        reward = grade.reward
        outcome = "error" if reward is None else "passed" if reward >= 1 else "failed"
    return AttemptView(
        id=result.task_id,
        task=task,
        agent=agent,
        attempt=number,
        outcome=outcome,
        reward=reward,
        verify_status=grade.status if grade else None,
        verify_output=grade.output if grade else "",
        error_kind=result.error_kind,
        duration_s=result.duration_s,
    )


def _rate(passed: int, graded: int) -> PassRate:
    interval = wilson(passed, graded)
    low, high = interval if interval else (None, None)
    rate = passed / graded if graded else None
    return PassRate(passed=passed, graded=graded, rate=rate, low=low, high=high)


def _checked(output: str, results: list[TaskResult]) -> None:
    """Every result an attempt's (``<task>.<agent>.<n>``), or a 422 naming one that is not."""
    for result in results:
        try:
            parse_attempt_id(result.task_id)
        except ValueError as exc:
            raise ApiError(
                f"{output} is not an eval's output: its result {result.task_id[:200]!r} is not "
                "an attempt (<task>.<agent>.<n>)",
                status=422,
                kind="unreadable",
            ) from exc


def _report_of(batch: ServerBatch) -> EvalReportView:
    """The batch's eval report (a worker thread's job: it reads the output folder)."""
    empty = EvalReportView(
        batch=batch.spec.id, is_eval=False, agents={}, pass_rates={}, tasks=[], attempts=[]
    )
    if not os.path.isfile(os.path.join(batch.spec.output, SETTINGS)):
        return empty
    if batch.read_only:  # another process's eval, maybe still running
        try:
            batch.load()
        except BatchOutputError as exc:  # damaged: the batch's view says so too
            batch.fail(exc)
            raise ApiError(str(exc), status=422, kind="unreadable") from exc
    results = list(batch.results.values())
    _checked(batch.spec.output, results)
    built = report(results)
    attempts = sorted(map(_attempt, results), key=lambda a: (a.task, a.agent, a.attempt))
    passed: defaultdict[str, int] = defaultdict(int)
    for row in built.tasks:
        passed[row.agent] += row.passed
    return msgspec.structs.replace(
        empty,
        is_eval=True,
        agents=built.agents,
        pass_rates={name: _rate(passed[name], a.graded) for name, a in built.agents.items()},
        tasks=[EvalTaskRow(**msgspec.structs.asdict(row)) for row in built.tasks],
        attempts=attempts,
    )


async def get_report(request: Request) -> Response:
    batch = _batch(request)
    return JsonResponse(await anyio.to_thread.run_sync(_report_of, batch))


ROUTES: list[BaseRoute] = [
    Route("/v1/batches/{batch_id}/report", get_report, methods=["GET"]),
]
