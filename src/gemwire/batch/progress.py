"""What a running batch reports: tagged structs, one JSON line each with ``gemwire batch --json``.

{"type": "batch_started", "tasks": 50, "skipped": 20, "mode": "acp", "concurrency": 8}
{"type": "task_started", "task_id": "fix-1", "attempt": 1, "running": 8}
{"type": "task_finished", "result": {...}, "done": 21, "failed": 0, "running": 7}
{"type": "batch_backoff", "seconds": 8.0, "reason": "rate limited (fix-3)"}
{"type": "batch_stopped", "reason": "quota exhausted (fix-9): ..."}
{"type": "batch_finished", "summary": {...}, "remaining": 0}
"""

from __future__ import annotations

import msgspec

from gemwire.batch.results import BatchSummary, TaskResult

__all__ = (
    "BatchBackoff",
    "BatchFinished",
    "BatchStarted",
    "BatchStopped",
    "Progress",
    "TaskFinished",
    "TaskStarted",
)


class _Progress(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    pass


class BatchStarted(_Progress, tag="batch_started", frozen=True, kw_only=True):
    tasks: int
    """Tasks to run now (finished ones skipped)."""
    skipped: int
    """Tasks already finished in the output folder."""
    mode: str
    concurrency: int


class TaskStarted(_Progress, tag="task_started", frozen=True, kw_only=True):
    task_id: str
    attempt: int
    running: int
    """Tasks running now, this one included (a retried attempt counts once)."""


class TaskFinished(_Progress, tag="task_finished", frozen=True, kw_only=True):
    result: TaskResult
    done: int
    """Tasks finished in this run, this one included."""
    failed: int
    running: int


class BatchBackoff(_Progress, tag="batch_backoff", frozen=True, kw_only=True):
    """No task starts for ``seconds``: the model's API is rate limiting the batch."""

    seconds: float
    reason: str


class BatchStopped(_Progress, tag="batch_stopped", frozen=True, kw_only=True):
    """No more tasks start (a quota is exhausted); the rest stay for a re-run."""

    reason: str


class BatchFinished(_Progress, tag="batch_finished", frozen=True, kw_only=True):
    summary: BatchSummary
    """Of every finished task in the output folder, earlier runs' included."""
    remaining: int
    """Tasks not finished (stopped, cancelled); a re-run picks them up."""


Progress = BatchStarted | TaskStarted | TaskFinished | BatchBackoff | BatchStopped | BatchFinished
