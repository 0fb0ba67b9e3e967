"""Grading an attempt: the task's ``verify`` run in its workspace once the agent has finished.

    grade = await verify(task, "/out/workspaces/fix-1")
    grade.status, grade.reward        # "passed", 1.0

``verify_files`` (hidden tests) are copied in first, so the agent never saw them. The reward
is 1 when the verifier exits 0, else 0, unless it writes a number to the file named by
``$GEMWIRE_REWARD_FILE``: then that number. A verifier that cannot start, is killed by a
signal, writes a reward that is not a number, or outlasts ``verify_timeout`` is an error of
its own (``crashed``, ``timeout``): no reward, never a silent 0.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio

from gemwire.batch.results import Grade
from gemwire.batch.tasks import Task
from gemwire.errors import AgentNotFound
from gemwire.runners.process import ProcessOutput, run_process

__all__ = ("REWARD_FILE", "Confine", "verify")

REWARD_FILE = "GEMWIRE_REWARD_FILE"
TAIL = 4096
"""Bytes of the verifier's output kept in its grade."""
_SHELL_CANNOT_RUN = frozenset({126, 127})
"""``sh -c``'s status for a command it could not find or execute."""


Confine = Callable[[Sequence[str], str], list[str]]
"""Turns a verifier's command and its reward folder into a sandboxed command (``--sandbox``)."""


async def verify(task: Task, workspace: str, *, confine: Confine | None = None) -> Grade:
    """Copy in the task's ``verify_files``, run its ``verify`` (through ``confine`` when
    given), and grade the result."""
    assert task.verify is not None
    started = time.monotonic()
    if task.verify_files is not None:
        try:
            await anyio.to_thread.run_sync(_copy_in, task.verify_files, workspace)
        except OSError as exc:
            why = f"cannot copy verify_files into the workspace: {exc.strerror or exc}"
            return Grade(status="crashed", reward=None, exit_code=None, output=why, duration_s=0.0)
    shell = isinstance(task.verify, str)
    argv = ["/bin/sh", "-c", task.verify] if isinstance(task.verify, str) else task.verify
    with tempfile.TemporaryDirectory(prefix="gemwire-reward-") as folder:
        reward_file = Path(folder) / "reward"
        if confine is not None:
            if not shell:  # through sh: a program the sandbox cannot run is 127 (crashed), not 1
                argv, shell = ["/bin/sh", "-c", 'exec "$@"', "sh", *argv], True
            argv = confine(argv, folder)
        try:
            output = await run_process(
                argv,
                cwd=Path(workspace),
                env={**os.environ, REWARD_FILE: str(reward_file)},
                timeout=task.verify_timeout,
                keep=TAIL,
            )
        except AgentNotFound as exc:
            return Grade(
                status="crashed",
                reward=None,
                exit_code=None,
                output=f"the verifier could not start: {exc}",
                duration_s=_since(started),
            )
        written = reward_file.read_bytes() if reward_file.is_file() else None
    return _graded(output, written, shell=shell, seconds=_since(started))


def _graded(output: ProcessOutput, written: bytes | None, *, shell: bool, seconds: float) -> Grade:
    text = _tail(output)
    code = output.returncode
    if output.timed_out:
        return Grade(status="timeout", reward=None, exit_code=None, output=text, duration_s=seconds)
    if code < 0 or (shell and (code in _SHELL_CANNOT_RUN or code > 128)):
        # Killed by a signal (``sh`` reports its command's death as 128 + the signal).
        return Grade(status="crashed", reward=None, exit_code=code, output=text, duration_s=seconds)
    reward = 1.0 if code == 0 else 0.0
    if written is not None and written.strip():
        try:
            reward = float(written)
        except ValueError:
            reward = math.nan
        if not math.isfinite(reward):
            why = f"{REWARD_FILE} holds {written[:40]!r}, not a number"
            return Grade(
                status="crashed",
                reward=None,
                exit_code=code,
                output=(text + "\n" + why).lstrip("\n")[-TAIL:],
                duration_s=seconds,
            )
    return Grade(
        status="passed" if reward >= 1 else "failed",
        reward=reward,
        exit_code=code,
        output=text,
        duration_s=seconds,
    )


def _tail(output: ProcessOutput) -> str:
    both = output.stdout + output.stderr
    return both[-TAIL:].decode(errors="replace")


def _copy_in(files: str, workspace: str) -> None:
    """Copy ``files`` over ``workspace``, replacing whatever the agent left in their places:
    a symlink it planted where a hidden test goes is removed, never written through."""
    for folder, dirs, names in os.walk(files):
        target = Path(workspace, os.path.relpath(folder, files))
        for name in dirs:
            _clear(target / name, keep_folder=True)
            (target / name).mkdir(exist_ok=True)
        for name in names:
            _clear(target / name, keep_folder=False)
            shutil.copy2(Path(folder, name), target / name, follow_symlinks=False)


def _clear(path: Path, *, keep_folder: bool) -> None:
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    elif path.is_dir() and not keep_folder:
        shutil.rmtree(path)


def _since(started: float) -> float:
    return round(time.monotonic() - started, 3)
