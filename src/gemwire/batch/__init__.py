"""Many tasks through one agent: bounded, resumable, backing off together on 429s.

    from gemwire.batch import BatchOptions, read_tasks, run_batch_sync

    summary = run_batch_sync(read_tasks("tasks.jsonl"), "out", BatchOptions(concurrency=8))
    print(summary.ok, summary.failed, summary.by_error_kind)

The output folder holds ``results.jsonl`` (one `TaskResult` a line) and each task's
normalized events; running again over it runs only what is not finished. See
docs/batch.md.
"""

from __future__ import annotations

from gemwire.batch.output import read_results
from gemwire.batch.progress import (
    BatchBackoff,
    BatchFinished,
    BatchStarted,
    BatchStopped,
    Progress,
    TaskFinished,
    TaskStarted,
)
from gemwire.batch.results import BatchSummary, FileChange, TaskResult, summarize
from gemwire.batch.runner import Batch, BatchOptions, run_batch, run_batch_sync
from gemwire.batch.tasks import Task, read_tasks

__all__ = (
    "Batch",
    "BatchBackoff",
    "BatchFinished",
    "BatchOptions",
    "BatchStarted",
    "BatchStopped",
    "BatchSummary",
    "FileChange",
    "Progress",
    "Task",
    "TaskFinished",
    "TaskResult",
    "TaskStarted",
    "read_results",
    "read_tasks",
    "run_batch",
    "run_batch_sync",
    "summarize",
)
