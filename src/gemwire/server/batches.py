"""The server's batches (`BatchManager`): `gemwire.batch` runs in the server's task group,
each batch's progress kept as numbered envelopes for its SSE stream.

    manager = BatchManager(state_dir, shutting_down)
    async with manager:                          # the app's lifespan
        batch = await manager.add(spec)          # known, and kept in the state folder
        await manager.start(batch, options)      # runs in the manager's task group
        batch.view()                             # done, failed, running, pending, eta_s, ...

A batch's spec (`BatchSpec`: its tasks, output folder and agent) is kept in
``<state-dir>/batches/<id>/batch.json`` and its progress envelopes in ``progress.jsonl``
there, so a restarted server lists it (``stopped`` if it was running) and
``retry-failed`` continues it. The output folder is `gemwire.batch`'s own: a batch that
stops (shutdown, `stop`) leaves it as a re-run expects it, its finished results kept.
An output folder opened read-only (``{"open": dir}``) has no tasks: its progress is what its
``results.jsonl`` says, read again on each look, and its tasks (`ServerBatch.task_rows`) are
those with a result or an events file.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import anyio
import msgspec
from anyio.abc import TaskStatus

from gemwire.batch import (
    BatchFinished,
    BatchOptions,
    BatchStopped,
    Progress,
    Task,
    TaskFinished,
    TaskResult,
    TaskStarted,
    read_results,
    run_batch,
)
from gemwire.errors import GemwireError
from gemwire.protocol._undecodable import UNDECODABLE
from gemwire.runners.acp import PermissionPreset
from gemwire.serve_api import BatchError, BatchStatus, BatchView, TaskRow

__all__ = ("BatchSpec", "ServerBatch", "whole_lines")

log = logging.getLogger("gemwire.server")


class BatchSpec(msgspec.Struct, frozen=True, kw_only=True):
    """What a batch is: kept in its ``batch.json``."""

    id: str
    output: str
    """The output folder (a real path under a root)."""
    created: str
    agent: str | None = None
    tasks: list[Task] | None = None
    """``None``: an output folder opened read-only."""
    concurrency: int = 4
    timeout: float | None = None
    """Seconds per task (a task's own ``timeout`` wins)."""
    permissions: PermissionPreset = "deny"
    """How the agent's permission requests are answered (a task's own wins)."""


def event_file_ids(output: str, is_id: Callable[[str], bool]) -> list[str]:
    r"""The task ids an output folder's ``events/`` names (``<id>.jsonl``, ``<id>.jsonl.part``;
    other names, and ids ``is_id`` refuses, left out), sorted; nothing is read.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as out:
    ...     os.mkdir(os.path.join(out, "events"))
    ...     for name in ("b.jsonl.part", "a.jsonl", "notes.txt", "..jsonl"):
    ...         open(os.path.join(out, "events", name), "w").close()
    ...     event_file_ids(out, lambda i: not i.startswith("."))
    ['a', 'b']
    """
    try:
        names = os.listdir(os.path.join(output, "events"))
    except OSError:  # none yet, or not a folder
        return []
    found = [name for name in names if name.endswith((".jsonl", ".jsonl.part"))]
    ids = {name.removesuffix(".part").removesuffix(".jsonl") for name in found}
    return sorted(i for i in ids if is_id(i))


def new_batch_id() -> str:
    """``b_`` and 16 hex digits.

    >>> len(new_batch_id()), new_batch_id()[:2]
    (18, 'b_')
    """
    return "b_" + secrets.token_hex(8)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


_encode = msgspec.json.Encoder().encode


def whole_lines(data: bytes) -> list[bytes]:
    r"""The JSON lines of a file written line by line: a last line still being written (or
    torn by a crash) is left out.

    >>> whole_lines(b'{"a":1}\n{"b":{"c":2}}\n{"d":{"e":3}')
    [b'{"a":1}', b'{"b":{"c":2}}']
    """
    lines = data.split(b"\n")
    if lines and lines[-1]:
        try:
            msgspec.json.decode(lines[-1])
        except UNDECODABLE:
            lines.pop()
    return [line for line in lines if line]


class ServerBatch:
    """One batch: its spec, its results so far, and its progress envelopes."""

    def __init__(self, spec: BatchSpec, folder: Path) -> None:
        self.spec = spec
        self.folder = folder
        self.status: BatchStatus = "stopped"
        self.error: BatchError | None = None
        self.results: dict[str, TaskResult] = {}
        self.running: set[str] = set()
        self.envelopes: list[bytes] = []
        """Each envelope's JSON, seq ``i + 1`` at index ``i``."""
        self._changed = anyio.Event()
        self._scope: anyio.CancelScope | None = None
        self._run_started = 0.0
        self._finished_this_run = 0
        self.ending = False
        """Its run said how it ended (batch_finished, batch_stopped) and is letting go of
        its output folder."""
        self._ended = anyio.Event()
        self._ended.set()

    async def wait_ended(self) -> None:
        """Until a run that said how it ended has let go of its output folder."""
        if self.ending:
            await self._ended.wait()

    @property
    def read_only(self) -> bool:
        return self.spec.tasks is None

    @property
    def last_seq(self) -> int:
        return len(self.envelopes)

    def load(self) -> None:
        """The results on disk, and the envelopes of earlier runs (a worker thread's job)."""
        self.results = {r.task_id: r for r in read_results(self.spec.output)}
        try:
            data = (self.folder / "progress.jsonl").read_bytes()
        except FileNotFoundError:
            data = b""
        self.envelopes = whole_lines(data)
        if self.read_only:
            self.status, self.error = "finished", None
        elif all(t.id in self.results for t in self.spec.tasks or ()):
            self.status = "finished"

    def view(self) -> BatchView:
        tasks = self.spec.tasks
        ids = [t.id for t in tasks] if tasks is not None else list(self.results)
        finished = [self.results[i] for i in ids if i in self.results]
        failed = [r for r in finished if not r.ok]
        running = len(self.running)
        pending = len(ids) - len(finished) - running
        eta = None
        if self.status == "running" and self._finished_this_run:
            elapsed = time.monotonic() - self._run_started
            eta = round(elapsed / self._finished_this_run * (pending + running), 1)
        return BatchView(
            id=self.spec.id,
            status=self.status,
            output=self.spec.output,
            agent=self.spec.agent,
            created=self.spec.created,
            read_only=self.read_only,
            tasks=len(ids),
            done=len(finished),
            failed=len(failed),
            running=running,
            pending=max(pending, 0),
            eta_s=eta,
            failed_by_kind=dict(Counter(r.error_kind or "unknown" for r in failed).most_common()),
            last_seq=self.last_seq,
            error=self.error,
        )

    def task_rows(self, on_disk: list[str]) -> list[TaskRow]:
        """Every task, in the batch's order: its tasks, or (opened read-only) those with a
        result, then those with only events (``on_disk``, from `event_file_ids`)."""
        if self.spec.tasks is not None:
            ids = [t.id for t in self.spec.tasks]
        else:
            ids = [*self.results, *(i for i in on_disk if i not in self.results)]
        rows = []
        for task_id in ids:
            result = self.results.get(task_id)
            if result is not None:
                rows.append(
                    TaskRow(
                        id=task_id,
                        status="done" if result.ok else "failed",
                        attempts=result.attempts,
                        error_kind=result.error_kind,
                        error_message=result.error.message if result.error else None,
                        duration_s=result.duration_s,
                    )
                )
            elif task_id in self.running:
                rows.append(TaskRow(id=task_id, status="running"))
            else:
                rows.append(
                    TaskRow(id=task_id, status="unfinished" if self.read_only else "pending")
                )
        return rows

    def add(self, progress: Progress) -> None:
        if isinstance(progress, TaskStarted):
            self.running.add(progress.task_id)
        elif isinstance(progress, TaskFinished):
            self.running.discard(progress.result.task_id)
            self.results.pop(progress.result.task_id, None)
            self.results[progress.result.task_id] = progress.result
            self._finished_this_run += 1
        envelope = _encode({"seq": self.last_seq + 1, "progress": progress})
        self.envelopes.append(envelope)
        # Best effort: the stream goes on without it; only a restarted server misses it.
        with contextlib.suppress(OSError), open(self.folder / "progress.jsonl", "ab") as file:
            file.write(envelope + b"\n")
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def changed(self) -> None:
        """Wait for a new envelope or the end of the run."""
        await self._changed.wait()

    def fail(self, exc: GemwireError) -> None:
        """The batch itself failed (its output folder, its agent): ``failed``, and why."""
        self.status = "failed"
        self.error = BatchError(kind=getattr(exc, "kind", type(exc).__name__), message=str(exc))

    def stop(self) -> None:
        if self._scope is not None:
            self._scope.cancel()

    async def run(
        self, options: BatchOptions, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Run the batch once; ``task_status`` is told once its output folder is open
        (what fails before that is raised to the caller of ``start``)."""
        assert self.spec.tasks is not None
        self.status = "running"
        self.error = None
        self.ending = False
        self._ended = anyio.Event()
        self.running.clear()
        self._run_started = time.monotonic()
        self._finished_this_run = 0
        if options.retry_failed:
            self.results = {k: r for k, r in self.results.items() if r.ok}
        started = False
        # What the run's last progress says it ended as; the status says it only once the
        # run has let go of its output folder (a retry right after would find it held).
        ended: BatchStatus = "stopped"
        try:
            with anyio.CancelScope() as self._scope:
                async with run_batch(self.spec.tasks, self.spec.output, options) as batch:
                    task_status.started()
                    started = True
                    async for progress in batch:
                        self.add(progress)
                        self.ending = isinstance(progress, BatchStopped | BatchFinished)
                        if isinstance(progress, BatchStopped):
                            ended = "failed"  # a stop: then never finished (kept below)
                        elif isinstance(progress, BatchFinished) and ended != "failed":
                            ended = "stopped" if progress.remaining else "finished"
            if ended == "failed":
                ended = "stopped"
            if not self._scope.cancel_called:
                self.status = ended
        except GemwireError as exc:
            if not started:
                self.status = "stopped"
                raise
            self.fail(exc)
        except Exception as exc:  # a bug in a batch must not end the server's task group
            log.exception("batch %s failed", self.spec.id)
            if not started:
                self.status = "stopped"
                raise
            self.status = "failed"
            self.error = BatchError(kind="internal", message=str(exc))
        finally:
            self._scope = None
            if self.status == "running":  # cancelled: shutdown, or stop()
                self.status = "stopped"
            self.running.clear()
            self.ending = False
            self._ended.set()
            self._notify()
