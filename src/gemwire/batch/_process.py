"""``process`` mode: one ``gemini -p`` per task, any Gemini CLI option, full isolation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Self

import anyio
import msgspec

from gemwire.batch.tasks import Task
from gemwire.events import Event
from gemwire.runners import GeminiOptions, RunResult, find_gemini, run_gemini

__all__ = ("ProcessExecutor",)


class ProcessExecutor:
    """Runs each task as its own Gemini CLI process; a task's fields override ``base``."""

    def agent_of(self, task: Task) -> str:
        return "gemini"

    def __init__(self, base: GeminiOptions) -> None:
        # The batch backs off as a whole on 429s; a CLI retrying for minutes on its own
        # would hold a slot and hide the storm from the other tasks.
        if base.max_rate_limit_retries is None:
            base = msgspec.structs.replace(base, max_rate_limit_retries=2)
        self._base = base

    async def run(self, task: Task, cwd: str, on_event: Callable[[Event], None]) -> RunResult:
        options = msgspec.structs.replace(
            self._base,
            cwd=cwd,
            model=task.model or self._base.model,
            approval_mode=task.approval_mode or self._base.approval_mode,
            timeout=task.timeout or self._base.timeout,
            max_model_turns=task.max_turns or self._base.max_model_turns,
        )
        async with run_gemini(task.prompt, options) as run:
            async for event in run:
                on_event(event)
        return run.result

    async def __aenter__(self) -> Self:
        # Found once, before any task starts: a missing CLI ends the batch at once
        # (`GeminiNotFound`), not as a failure of every task.
        found = await anyio.to_thread.run_sync(find_gemini, self._base.executable)
        self._base = msgspec.structs.replace(self._base, executable=found.path)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        pass
