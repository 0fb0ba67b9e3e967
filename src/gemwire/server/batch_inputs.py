"""What a batch request names, held to the server's roots: its output folder and its
tasks (from a tasks file under a root, or given), each folder a real path under a root."""

from __future__ import annotations

import os

import msgspec

from gemwire.batch import Task, read_tasks
from gemwire.batch.tasks import check_tasks
from gemwire.errors import InvalidTasks
from gemwire.server.paths import confine
from gemwire.server.responses import BadRequest

__all__ = ("MAX_TASKS_FILE", "output_folder", "placed_tasks")

MAX_TASKS_FILE = 256 * 1024 * 1024
"""A tasks file larger than this is refused (400); so is one that is not a regular file."""


def output_folder(path: str, roots: tuple[str, ...]) -> str:
    """The real output folder under a root; one that does not exist yet must have its
    parent under a root (the batch makes it)."""
    if "\0" in path:
        raise BadRequest("the path holds a NUL byte")
    joined = os.path.normpath(os.path.join(roots[0], os.path.expanduser(path)))
    if os.path.lexists(joined):
        return confine(joined, roots)
    parent, name = os.path.split(joined)
    if not name:
        raise BadRequest(f"{path!r} names no folder")
    return os.path.join(confine(parent, roots), name)


def _placed(task: Task, number: int, roots: tuple[str, ...]) -> Task:
    """The task with its id, and its folders as real paths under the roots."""
    folders = {
        name: confine(value, roots)
        for name in ("workspace", "template")
        if (value := getattr(task, name)) is not None
    }
    if not folders:
        folders["workspace"] = roots[0]
    return msgspec.structs.replace(task, id=task.id or f"{number:05d}", **folders)


def placed_tasks(given: str | list[Task], roots: tuple[str, ...]) -> list[Task]:
    """The tasks of a batch request (a tasks file under a root, or the tasks), each with
    its id and its folders as real paths under the roots; `BadRequest` for bad ones."""
    if isinstance(given, str):
        try:
            read = read_tasks(confine(given, roots, folder=False), max_bytes=MAX_TASKS_FILE)
        except InvalidTasks as exc:
            raise BadRequest(str(exc)) from exc
    else:
        if not given:
            raise BadRequest("no tasks")
        read = given
    if any(task.verify is not None or task.verify_files is not None for task in read):
        # A verifier is a command the server would run itself, past the agent's permissions,
        # and verify_files a folder it would copy from anywhere: not offered to a client.
        raise BadRequest("a task's verify and verify_files are not offered by the server")
    tasks = [_placed(task, n, roots) for n, task in enumerate(read, 1)]
    try:
        check_tasks(tasks)
    except InvalidTasks as exc:
        raise BadRequest(str(exc)) from exc
    return tasks
