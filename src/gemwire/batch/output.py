"""A batch's output folder: what survives a crash, and what a re-run skips.

    OUT/results.jsonl          one `TaskResult` a line, appended and fsynced as each task ends
    OUT/events/<id>.jsonl      the task's normalized events (``<id>.jsonl.part`` while it runs)
    OUT/workspaces/<id>/       the task's copy of its template, if it has one

A task is finished exactly when its line is in ``results.jsonl``: its events file is
renamed into place first, so a crash between the two re-runs the task and overwrites the
events. A line torn by a crash is cut off when the folder is opened again. One batch
writes to a folder at a time (an advisory lock).
"""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path
from typing import IO

import msgspec

from gemwire.batch.results import TaskResult
from gemwire.batch.tasks import Task
from gemwire.errors import InvalidOptions
from gemwire.events import Event

__all__ = ("BatchOutput", "EventLog", "read_results")

RESULTS = "results.jsonl"
_LOCK = ".gemwire-batch.lock"


def read_results(folder: str | Path) -> list[TaskResult]:
    """The finished tasks' results in a batch output folder (a torn last line is left out)."""
    results, _ = _read(Path(folder) / RESULTS)
    return results


def _read(path: Path) -> tuple[list[TaskResult], int]:
    """The results and the length of the file's whole, valid lines."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], 0
    decoder = msgspec.json.Decoder(TaskResult)
    results: list[TaskResult] = []
    good = 0
    for line in data.splitlines(keepends=True):
        if not line.endswith(b"\n"):
            break  # torn by a crash mid-write: the task was not finished
        try:
            results.append(decoder.decode(line))
        except msgspec.DecodeError:
            break
        good += len(line)
    return results, good


class EventLog:
    """A task's events file, written as it runs and put in place by `commit`."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._part = path.with_name(path.name + ".part")
        self._file: IO[bytes] = open(self._part, "wb")  # noqa: SIM115 (closed by commit/close)
        self._encoder = msgspec.json.Encoder()
        self.agent: str | None = None
        """The ``agent`` of the first event written."""

    def write(self, event: Event) -> None:
        if self.agent is None:
            self.agent = event.agent
        self._file.write(self._encoder.encode(event) + b"\n")

    def commit(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        os.replace(self._part, self._path)

    def close(self) -> None:
        """Leave the partial file for a look (a re-run overwrites it)."""
        self._file.close()


class BatchOutput:
    """The output folder of one batch, locked while open."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder).resolve()
        (self.folder / "events").mkdir(parents=True, exist_ok=True)
        self._lock = os.open(self.folder / _LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._lock)
            raise InvalidOptions(f"another batch is writing to {self.folder}") from None
        results_path = self.folder / RESULTS
        results, good = _read(results_path)
        self.finished: dict[str, TaskResult] = {r.task_id: r for r in results}
        self._results = open(results_path, "ab")  # noqa: SIM115 (closed by close)
        if self._results.tell() != good:
            self._results.truncate(good)
        self._encoder = msgspec.json.Encoder()

    def workspace_for(self, task: Task) -> str:
        """The folder the task runs in: a fresh copy of its template, or its workspace."""
        if task.template is None:
            return task.workspace or os.getcwd()
        copy = self.folder / "workspaces" / task.id
        if copy.exists():
            shutil.rmtree(copy)  # left by an unfinished earlier attempt
        shutil.copytree(task.template, copy, symlinks=True)
        return str(copy)

    def events_for(self, task: Task) -> EventLog:
        return EventLog(self.folder / "events" / f"{task.id}.jsonl")

    def begin(self, task: Task) -> tuple[str, EventLog]:
        """An attempt's folder and its fresh events file (both touch the disk: for a
        worker thread, not the event loop)."""
        return self.workspace_for(task), self.events_for(task)

    def record(self, result: TaskResult) -> None:
        """Mark the task finished: one whole line, on disk before this returns."""
        self._results.write(self._encoder.encode(result) + b"\n")
        self._results.flush()
        os.fsync(self._results.fileno())
        self.finished[result.task_id] = result

    def close(self) -> None:
        self._results.close()
        os.close(self._lock)
