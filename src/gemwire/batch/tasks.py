"""A batch's tasks: one JSON object a line, read and checked before anything starts.

    {"id": "fix-1", "prompt": "fix the failing test", "template": "repos/calc", "timeout": 300}

Paths are relative to the tasks file's folder. A task runs in ``workspace`` as it is, or
in a fresh copy of ``template`` made for it under the output folder (so a re-run starts
from the same files); with neither it runs in the folder the batch was started from.

Ids name files, so two ids that differ only in case (``A``, ``a``) are refused: they would
be one file on a case-insensitive file system. So is an unknown ``agent``, and a prompt
over `MAX_PROMPT_BYTES` (Gemini CLI reads no more from stdin).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import msgspec

from gemwire.batch._files import read_regular
from gemwire.errors import InvalidTasks
from gemwire.protocol._undecodable import UNDECODABLE, why_undecodable
from gemwire.runners.agents import AGENTS
from gemwire.runners.gemini_options import MAX_PROMPT_BYTES

__all__ = ("Task", "check_tasks", "read_tasks")

_TASK_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
"""Task ids name files in the output folder: no separators, no leading dot."""

Approval = Literal["default", "auto_edit", "yolo", "plan"]
Permissions = Literal["deny", "reads", "edits", "all"]


class Task(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One task of a batch. Only ``prompt`` is required; ``id`` defaults to the line number."""

    id: str = ""
    prompt: str
    workspace: str | None = None
    """The folder the agent works in, used as it is."""
    template: str | None = None
    """A folder copied for this task under the output folder; the agent works in the copy."""
    model: str | None = None
    approval_mode: Approval | None = None
    """Gemini CLI's approval mode (``process`` mode)."""
    permissions: Permissions | None = None
    """How an ACP agent's permission requests are answered (``acp`` mode)."""
    timeout: float | None = None
    """Seconds for the task; then it ends with kind ``timeout``."""
    max_turns: int | None = None
    """Model turns before the task is stopped (kind ``cancelled``)."""
    agent: str | None = None
    """An agent name (``acp`` mode); the batch's own agent when not given."""
    verify: str | list[str] | None = None
    """A command run in the workspace once the agent's turn has ended: a string for
    ``/bin/sh -c``, or a program and its arguments. It grades the attempt (`Grade`)."""
    verify_files: str | None = None
    """A folder copied into the workspace only after the agent has finished (hidden tests);
    needs ``template``, so the next attempt starts without them."""
    verify_timeout: float = 300.0
    """Seconds for the verifier; then the grade is ``timeout`` (an error, not a 0)."""
    attempts: int | None = None
    """``gemwire eval``: attempts of this task per agent (else the run's ``-k``)."""
    max_tokens: int | None = None
    """``gemwire eval``: an attempt using more tokens is stopped, kind ``budget``."""
    max_cost_usd: float | None = None
    """``gemwire eval``: an attempt costing more (as the agent reports it, else gemwire's
    estimate) is stopped, kind ``budget``."""


def read_tasks(path: str | Path, *, max_bytes: int | None = None) -> list[Task]:
    """The tasks in a JSONL file, paths made absolute; `InvalidTasks` names every bad line.

    With ``max_bytes`` (a server reading a path its client named) only a regular file of at
    most that size is read: a FIFO or a device is refused at once, never waited on.
    """
    path = Path(path)
    try:
        data = path.read_bytes() if max_bytes is None else read_regular(path, max_bytes)
    except OSError as exc:
        raise InvalidTasks(f"cannot read {path}: {exc.strerror or exc}") from exc
    base = path.resolve().parent
    decoder = msgspec.json.Decoder(Task)
    tasks: list[Task] = []
    problems: list[str] = []
    seen = _Ids()
    for lineno, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            task = decoder.decode(line)
        except UNDECODABLE as exc:
            problems.append(f"line {lineno}: {why_undecodable(exc)}")
            continue
        task = _checked(task, lineno, base, problems)
        problems += seen.add(task.id, f"line {lineno}")
        tasks.append(task)
    if problems:
        raise InvalidTasks(f"{path}: " + "; ".join(problems[:10]), problems=problems)
    if not tasks:
        raise InvalidTasks(f"{path}: no tasks")
    return tasks


def check_tasks(tasks: Sequence[Task]) -> None:
    """Raise `InvalidTasks` for what `read_tasks` would refuse in tasks made in code: ids
    that are not file names or that collide (in any case), unknown agents, prompts too big."""
    problems: list[str] = []
    seen = _Ids()
    for number, task in enumerate(tasks, 1):
        where = f"task {number}"
        if not _TASK_ID.fullmatch(task.id):
            problems.append(f"{where}: id {task.id!r} is not 1-128 of A-Z a-z 0-9 . _ -")
        problems += [f"{where}: {problem}" for problem in _content(task)]
        problems += seen.add(task.id, where)
    if problems:
        raise InvalidTasks("; ".join(problems[:10]), problems=problems)


class _Ids:
    """Ids seen so far, by their case-folded form: the file names they would take."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[str, str]] = {}

    def add(self, task_id: str, where: str) -> list[str]:
        key = task_id.casefold()
        if key not in self._seen:
            self._seen[key] = (task_id, where)
            return []
        other, there = self._seen[key]
        if other == task_id:
            return [f"{where}: id {task_id!r} is also on {there}"]
        collides = (
            f"{where}: id {task_id!r} differs from {other!r} ({there}) only in case: "
            "they would be one file on a case-insensitive file system"
        )
        return [collides]


def _content(task: Task) -> list[str]:
    """What is wrong with a task's fields, whoever made it."""
    problems = []
    size = len(task.prompt.encode(errors="surrogatepass"))
    if size > MAX_PROMPT_BYTES:
        problems.append(
            f"the prompt is {size} bytes; Gemini CLI reads at most {MAX_PROMPT_BYTES} from stdin"
        )
    if task.agent is not None and task.agent not in AGENTS:
        problems.append(f"unknown agent {task.agent!r}; known: {', '.join(AGENTS)}")
    return problems + _grading(task)


def _grading(task: Task) -> list[str]:
    """What is wrong with a task's grading fields."""
    problems = []
    if task.verify is not None and not (
        task.verify if isinstance(task.verify, list) else task.verify.strip()
    ):
        problems.append("empty verify")
    if task.verify_files is not None and task.verify is None:
        problems.append("verify_files without verify")
    if task.verify_files is not None and task.template is None:
        problems.append("verify_files needs template (each attempt a fresh copy without them)")
    if not task.verify_timeout > 0:
        problems.append("verify_timeout must be over 0")
    if task.attempts is not None and task.attempts < 1:
        problems.append("attempts must be 1 or more")
    if task.max_tokens is not None and task.max_tokens < 1:
        problems.append("max_tokens must be 1 or more")
    if task.max_cost_usd is not None and not task.max_cost_usd > 0:
        problems.append("max_cost_usd must be over 0")
    return problems


def _checked(task: Task, lineno: int, base: Path, problems: list[str]) -> Task:
    task_id = task.id or f"{lineno:05d}"
    if not _TASK_ID.fullmatch(task_id):
        problems.append(f"line {lineno}: id {task_id!r} is not 1-128 of A-Z a-z 0-9 . _ -")
    problems += [f"line {lineno}: {problem}" for problem in _content(task)]
    if task.workspace is not None and task.template is not None:
        problems.append(f"line {lineno}: give workspace or template, not both")
    if not task.prompt.strip():
        problems.append(f"line {lineno}: empty prompt")
    if task.timeout is not None and not task.timeout > 0:
        problems.append(f"line {lineno}: timeout must be over 0")
    if task.max_turns is not None and task.max_turns < 1:
        problems.append(f"line {lineno}: max_turns must be 1 or more")
    folders = {}
    for name in ("workspace", "template", "verify_files"):
        value = getattr(task, name)
        if value is None:
            continue
        folder = base / value
        if not folder.is_dir():
            problems.append(f"line {lineno}: {name} {value!r} is not a folder")
        folders[name] = str(folder.resolve())
    return msgspec.structs.replace(task, id=task_id, **folders)
