"""A batch's output folder: what survives a crash, and what a re-run skips.

    OUT/results.jsonl          one `TaskResult` a line, appended and fsynced as each task ends
    OUT/events/<id>.jsonl      the task's normalized events (``<id>.jsonl.part`` while it runs)
    OUT/workspaces/<id>/       the task's copy of its template, if it has one

A task is finished exactly when its line is in ``results.jsonl``: its events file is
renamed into place first, so a crash between the two re-runs the task and overwrites the
events. A last line torn by a crash is cut off when the folder is opened again; any other
line that is not a result stops the batch before it starts (`BatchOutputError`), and
nothing is cut. A write that fails (a full disk) is undone to the last whole line and
stops the batch. A task stopped before it ended leaves ``<id>.jsonl.part``, ended by a
``notice`` that says so (unless the process was killed outright); a re-run overwrites it.
Where a task has more than one line (``retry_failed``), its last line is its result. One
batch writes to a folder at a time (an advisory lock).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import IO, Protocol

import msgspec

from gemwire._portable import O_NOFOLLOW, try_lock
from gemwire.batch._files import read_regular
from gemwire.batch.results import TaskResult
from gemwire.batch.tasks import Task
from gemwire.errors import BatchOutputError, InvalidOptions
from gemwire.events import Event, Notice
from gemwire.protocol._undecodable import UNDECODABLE, why_undecodable

__all__ = ("BatchOutput", "EventLog", "Opener", "read_results")

RESULTS = "results.jsonl"
MAX_RESULTS_BYTES = 1 << 30
"""A ``results.jsonl`` larger than this (1 GiB, a million tasks' worth) is not read."""
_LOCK = ".gemwire-batch.lock"
STOPPED = "the task was stopped before it ended; it is not finished, and a re-run starts it again"
"""The ``notice`` that ends the events of a task the batch stopped."""


class Opener(Protocol):
    """Opens the folder's files, as `open` does (a test's seam for a full disk)."""

    def __call__(self, file: Path, mode: str, buffering: int) -> IO[bytes]: ...


def read_results(folder: str | Path) -> list[TaskResult]:
    """The finished tasks' results in a batch output folder, one per task (its last line;
    a torn last line is left out). Raises `BatchOutputError` for any other bad line."""
    results, _ = _read(Path(folder) / RESULTS)
    return list(results.values())


def _read(path: Path) -> tuple[dict[str, TaskResult], int]:
    """Each task's result, in the order of their last lines, and the length of the file
    without a torn last line."""
    try:
        data = read_regular(path, MAX_RESULTS_BYTES)  # never a FIFO swapped in: no hang
    except FileNotFoundError:
        return {}, 0
    except OSError as exc:
        raise BatchOutputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    decoder = msgspec.json.Decoder(TaskResult)
    results: dict[str, TaskResult] = {}
    good = 0
    for lineno, line in enumerate(data.splitlines(keepends=True), 1):
        if not line.endswith(b"\n"):
            break  # the last line, torn by a crash mid-write: that task was not finished
        try:
            result = decoder.decode(line)
        except UNDECODABLE as exc:
            raise BatchOutputError(
                f"{path} line {lineno} is not a task's result ({why_undecodable(exc)}); nothing was "
                "changed: fix or delete that line, then run again"
            ) from exc
        results.pop(result.task_id, None)  # a later line supersedes (``retry_failed``)
        results[result.task_id] = result
        good += len(line)
    return results, good


class EventLog:
    """A task's events file, written as it runs and put in place by `commit`."""

    def __init__(self, path: Path, opener: Opener = open) -> None:
        self._path = path
        self._part = path.with_name(path.name + ".part")
        try:
            self._file = opener(self._part, "wb", -1)
        except OSError as exc:
            raise _unwritable(self._part, exc) from exc
        self._encoder = msgspec.json.Encoder()
        self.agent: str | None = None
        """The ``agent`` of the first event written."""
        self._session_id: str | None = None

    def write(self, event: Event) -> None:
        if self.agent is None:
            self.agent = event.agent
        if self._session_id is None:
            self._session_id = event.session_id
        try:
            self._file.write(self._encoder.encode(event) + b"\n")
        except OSError as exc:
            raise _unwritable(self._part, exc) from exc

    def commit(self) -> None:
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            os.replace(self._part, self._path)
        except OSError as exc:
            self._close()
            raise _unwritable(self._part, exc) from exc

    def stop(self, agent: str) -> None:
        """End the partial file with a notice that the task was stopped, and leave it for a
        look (a re-run overwrites it)."""
        stopped = Notice(
            agent=self.agent or agent,
            session_id=self._session_id,
            severity="warning",
            message=STOPPED,
            source="gemwire",
        )
        with contextlib.suppress(OSError):  # a full disk: the file ends where it could
            self._file.write(self._encoder.encode(stopped) + b"\n")
        self._close()

    def _close(self) -> None:
        # What a full disk kept from the partial file is lost; the task re-runs anyway.
        with contextlib.suppress(OSError):
            self._file.close()


class BatchOutput:
    """The output folder of one batch, locked while open; ``opener`` opens its files."""

    def __init__(self, folder: str | Path, *, opener: Opener = open) -> None:
        self.folder = Path(folder).resolve()
        self._opener = opener
        try:
            (self.folder / "events").mkdir(parents=True, exist_ok=True)
            self._lock = os.open(self.folder / _LOCK, os.O_RDWR | os.O_CREAT | O_NOFOLLOW, 0o600)
        except OSError as exc:
            raise _unwritable(self.folder, exc) from exc
        if not try_lock(self._lock):
            os.close(self._lock)
            raise InvalidOptions(f"another batch is writing to {self.folder}") from None
        self._path = self.folder / RESULTS
        try:
            self.finished, self._size = _read(self._path)
            # Unbuffered: a write that fails leaves nothing behind to be flushed later.
            self._results = opener(self._path, "ab", 0)
            if os.fstat(self._results.fileno()).st_size != self._size:
                os.ftruncate(self._results.fileno(), self._size)
        except BaseException:
            os.close(self._lock)
            raise
        self._encoder = msgspec.json.Encoder()

    def workspace_for(self, task: Task) -> str:
        """The folder the task runs in: a fresh copy of its template, or its workspace."""
        if task.template is None:
            return task.workspace or os.getcwd()
        copy = self.folder / "workspaces" / task.id
        try:
            if copy.exists():
                shutil.rmtree(copy)  # left by an unfinished earlier attempt
            shutil.copytree(task.template, copy, symlinks=True)
        except OSError as exc:
            raise _unwritable(copy, exc) from exc
        return str(copy)

    def events_for(self, task: Task) -> EventLog:
        return EventLog(self.folder / "events" / f"{task.id}.jsonl", self._opener)

    def begin(self, task: Task) -> tuple[str, EventLog]:
        """An attempt's folder and its fresh events file (both touch the disk: for a
        worker thread, not the event loop)."""
        return self.workspace_for(task), self.events_for(task)

    def record(self, result: TaskResult) -> None:
        """Mark the task finished: one whole line, on disk before this returns. A write
        that fails is undone to the last whole line (`BatchOutputError`)."""
        line = memoryview(self._encoder.encode(result) + b"\n")
        try:
            written = 0
            while written < len(line):
                written += self._results.write(line[written:])
            os.fsync(self._results.fileno())
        except OSError as exc:
            # Else a torn last line, cut when the folder is opened again.
            with contextlib.suppress(OSError):
                os.ftruncate(self._results.fileno(), self._size)
            raise BatchOutputError(
                f"cannot write {self._path}: {exc.strerror or exc}; the results before "
                f"{result.task_id}'s are on disk, and a re-run starts the rest"
            ) from exc
        self._size += len(line)
        self.finished.pop(result.task_id, None)
        self.finished[result.task_id] = result

    def close(self) -> None:
        try:
            self._results.close()
        finally:
            os.close(self._lock)


def _unwritable(path: Path, exc: OSError) -> BatchOutputError:
    return BatchOutputError(f"cannot write {path}: {exc.strerror or exc}")
