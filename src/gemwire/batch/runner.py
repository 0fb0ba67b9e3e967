"""Run many tasks through one agent, bounded, resumable, backing off together on 429s.

    tasks = read_tasks("tasks.jsonl")
    async with run_batch(tasks, "out", BatchOptions(concurrency=8)) as batch:
        async for progress in batch:
            print(progress.type)
    print(batch.summary)

A task that fails never stops the batch. Re-running over the same output folder skips the
tasks already in its ``results.jsonl``. Leaving the ``async with`` before the progress ends
(``break``, an exception, a cancelled scope, the command line's SIGTERM) stops the running
tasks; what finished is on disk, and a re-run starts the rest.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Literal, Protocol, Self

import anyio
import msgspec
from anyio.abc import ObjectSendStream

from gemwire.batch._gate import RateGate
from gemwire.batch.output import BatchOutput
from gemwire.batch.progress import (
    BatchBackoff,
    BatchFinished,
    BatchStarted,
    BatchStopped,
    Progress,
    TaskFinished,
    TaskStarted,
)
from gemwire.batch.results import (
    BatchSummary,
    FileChange,
    Grade,
    Outcome,
    ReportedCost,
    TaskResult,
    relative_to,
    reported_cost,
    summarize,
)
from gemwire.batch.tasks import Task, check_tasks
from gemwire.batch.verify import verify
from gemwire.errors import GemwireError, InvalidOptions
from gemwire.events import Event, SessionUpdated, ToolCallStarted
from gemwire.runners import GeminiOptions
from gemwire.runners.acp import AcpOptions

__all__ = (
    "Batch",
    "BatchOptions",
    "Executor",
    "only_gemwire_error",
    "run_batch",
    "run_batch_sync",
    "run_with",
)

RETRIED_KINDS = frozenset({"rate_limited", "crashed"})
"""Failures another attempt may fix; every other kind is final."""


class BatchOptions(msgspec.Struct, frozen=True, kw_only=True):
    """How to run a batch. A task's own fields (model, timeout, ...) win over these."""

    mode: Literal["process", "acp"] = "process"
    """``process``: one ``gemini -p`` per task. ``acp``: long-lived ACP agent processes,
    each serving many tasks as sessions (docs/batch.md says when to pick which)."""
    concurrency: int = 4
    """Tasks running at once."""
    gemini: GeminiOptions = GeminiOptions()
    """The options of every task's run in ``process`` mode; in ``acp`` mode without
    ``acp``, the agent is this Gemini CLI with ``--acp`` (its executable, home, env)."""
    acp: AcpOptions | None = None
    """The ACP agent of ``acp`` mode (its command, env, permissions preset)."""
    agent: str | None = None
    """``acp`` mode: the built-in agent (``claude``, ``codex``, ``qwen``, ``opencode``,
    ``gemini``; docs/agents.md) of tasks that name none; else ``acp``'s command."""
    agents: int = 1
    """``acp`` mode: processes of each agent at most (Node runs an agent on one core)."""
    sessions_per_agent: int = 50
    """``acp`` mode: an agent is replaced after serving this many tasks (it keeps every
    session it served: Gemini CLI 0.61.0 grows by ~2 MiB a session)."""
    max_attempts: int = 3
    """Attempts for a task that ends rate limited or crashed (1: never retried)."""
    retry_failed: bool = False
    """Run again the tasks whose result in the output folder is a failure; each one's new
    line in ``results.jsonl`` supersedes its old one."""
    backoff: float = 5.0
    """Seconds the whole batch pauses after a 429; doubles on each one in a row."""
    max_backoff: float = 300.0
    ray: bool = False
    """Run the tasks on a Ray cluster (``pip install 'gemwire[ray]'``): one worker per node,
    each running ``mode``, and the tasks' ``verify``, there; this process keeps the output
    folder."""
    ray_address: str | None = None
    """The cluster, as for ``ray.init`` (``None``: ``RAY_ADDRESS``, else a local one)."""

    def __post_init__(self) -> None:
        for name in ("concurrency", "agents", "sessions_per_agent", "max_attempts"):
            if getattr(self, name) < 1:
                raise InvalidOptions(f"{name} must be 1 or more")
        if not 0 < self.backoff <= self.max_backoff:
            raise InvalidOptions("backoff must be over 0 and at most max_backoff")
        if self.ray_address is not None and not self.ray:
            raise InvalidOptions("ray_address is for ray=True")
        if (self.acp is not None or self.agent is not None) and self.mode != "acp":
            raise InvalidOptions("an ACP agent (acp, agent) needs mode='acp'")


class Executor(Protocol):
    """Runs one task at a time (many at once); entered once for the whole batch."""

    def agent_of(self, task: Task) -> str: ...
    async def __aenter__(self) -> Self: ...
    async def __aexit__(self, *exc_info: object) -> None: ...
    async def run(self, task: Task, cwd: str, on_event: Callable[[Event], None]) -> Outcome: ...


class Batch:
    """A running batch: iterate its progress; `summary` once it is over."""

    def __init__(self, receive: AsyncIterator[Progress]) -> None:
        self._receive = receive
        self.summary: BatchSummary | None = None

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Progress:
        # An iterator, not an async generator: a caller may ``break`` out of it without
        # leaving a generator for the garbage collector to close.
        progress = await anext(self._receive)
        if isinstance(progress, BatchFinished):
            self.summary = progress.summary
        return progress


@asynccontextmanager
async def run_batch(
    tasks: Sequence[Task], output: str | Path, options: BatchOptions | None = None
) -> AsyncGenerator[Batch]:
    """Run the tasks not yet finished in ``output``; see the module docs."""
    options = options or BatchOptions()
    check_tasks(tasks)
    budgeted = next((t for t in tasks if t.max_tokens or t.max_cost_usd), None)
    if budgeted is not None:  # counted by ``gemwire eval`` only: never ignored silently
        raise InvalidOptions(f"task {budgeted.id} has a budget: gemwire eval runs those")
    if options.mode == "process":
        named = next((t for t in tasks if t.agent not in (None, "gemini")), None)
        if named is not None:
            raise InvalidOptions(
                f"task {named.id} names agent {named.agent!r}: agents other than gemini "
                "need mode 'acp'"
            )
    executor = _executor(options)
    grade: Grader = verify
    if options.ray:  # each task's node grades it, and the executor hands the grade over
        from gemwire.batch._ray import RayExecutor

        assert isinstance(executor, RayExecutor)
        grade = executor.grade
    async with run_with(tasks, output, options, executor, grade) as batch:
        yield batch


Grader = Callable[[Task, str], Awaitable[Grade]]
"""Grades a task's workspace once its agent has finished (`verify`, or a sandboxed one)."""


@asynccontextmanager
async def run_with(
    tasks: Sequence[Task],
    output: str | Path,
    options: BatchOptions,
    executor: Executor,
    grade: Grader = verify,
) -> AsyncGenerator[Batch]:
    """`run_batch` with the given executor and grader (``gemwire eval``'s)."""
    folder = BatchOutput(output)
    try:
        send, receive = anyio.create_memory_object_stream[Progress](64)
        engine = _Engine(tasks, folder, options, executor, send, grade)
        async with anyio.create_task_group() as group, receive:
            group.start_soon(engine.run)
            yield Batch(receive)
            # Left before the end: stop the running tasks (a re-run starts them again).
            group.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        # What ends a whole batch (no agent, an output folder that fails) is raised as itself.
        raise only_gemwire_error(group) or group from None
    finally:
        folder.close()


def run_batch_sync(
    tasks: Sequence[Task], output: str | Path, options: BatchOptions | None = None
) -> BatchSummary:
    """`run_batch` from synchronous code; the summary of the output folder."""

    async def go() -> BatchSummary:
        async with run_batch(tasks, output, options) as batch:
            async for _ in batch:
                pass
        assert batch.summary is not None
        return batch.summary

    return anyio.run(go)


def _executor(options: BatchOptions) -> Executor:
    if options.ray:
        from gemwire.batch._ray import RayExecutor

        return RayExecutor(local_executor(options), partial(on_this_machine, options), options)
    return local_executor(options)


@asynccontextmanager
async def on_this_machine(options: BatchOptions) -> AsyncGenerator[tuple[Executor, Grader]]:
    """A Ray node's executor and grader (`gemwire.batch._ray.Node`): the local ones."""
    yield local_executor(options), verify


def local_executor(options: BatchOptions) -> Executor:
    """The executor of ``options.mode`` on this machine (a Ray worker's too)."""
    if options.mode == "process":
        from gemwire.batch._process import ProcessExecutor

        return ProcessExecutor(options.gemini)
    from gemwire.batch._acp import AcpExecutor, gemini_acp_options

    return AcpExecutor(
        options.acp or gemini_acp_options(options.gemini),
        agent=options.agent,
        agents=options.agents,
        sessions_per_agent=options.sessions_per_agent,
        concurrency=options.concurrency,
        gemini=options.gemini if options.acp is None else None,
    )


class _Engine:
    def __init__(
        self,
        tasks: Sequence[Task],
        output: BatchOutput,
        options: BatchOptions,
        executor: Executor,
        send: ObjectSendStream[Progress],
        grade: Grader,
    ) -> None:
        finished = output.finished
        self._todo = [
            t
            for t in tasks
            if t.id not in finished or (options.retry_failed and not finished[t.id].ok)
        ]
        self._skipped = len(tasks) - len(self._todo)
        self._output = output
        self._options = options
        self._executor = executor
        self._grade = grade
        self._send = send
        self._gate = RateGate(options.backoff, options.max_backoff)
        self._stopped: str | None = None
        self._done = self._failed = 0
        self._running: set[str] = set()
        """Tasks started and not yet finished (a retried task once)."""
        self._reporting = anyio.Lock()
        """Held from a count's change to its event's send: events arrive in the order of the
        counts they carry, whichever task sends first."""
        self._recording = anyio.Lock()

    async def run(self) -> None:
        async with self._send, self._executor:
            await self._send.send(
                BatchStarted(
                    tasks=len(self._todo),
                    skipped=self._skipped,
                    mode=self._options.mode,
                    concurrency=self._options.concurrency,
                )
            )
            slots = anyio.Semaphore(self._options.concurrency)
            async with anyio.create_task_group() as group:
                for task in self._todo:
                    await slots.acquire()
                    await self._gate.wait()
                    if self._stopped:
                        slots.release()
                        break
                    group.start_soon(self._task, task, slots)
            finished = self._output.finished
            await self._send.send(
                BatchFinished(
                    summary=summarize(finished.values()),
                    remaining=sum(t.id not in finished for t in self._todo),
                )
            )

    async def _task(self, task: Task, slots: anyio.Semaphore) -> None:
        try:
            for attempt in range(1, self._options.max_attempts + 1):
                if attempt > 1:
                    await self._gate.wait()
                if self._stopped:
                    return
                async with self._reporting:
                    self._running.add(task.id)
                    await self._send.send(
                        TaskStarted(task_id=task.id, attempt=attempt, running=len(self._running))
                    )
                result = await self._attempt(task, attempt)
                kind = result.error_kind
                if kind == "quota":
                    # Retrying will not fix it and every other task would hit it too: stop
                    # starting tasks and leave this one unfinished for a later run.
                    self._stopped = f"quota exhausted ({task.id}): {result.error.message}"  # type: ignore[union-attr]
                    await self._send.send(BatchStopped(reason=self._stopped))
                    return
                if kind == "rate_limited":
                    seconds = self._gate.close(
                        (result.error.retry_delay or None) if result.error else None
                    )
                    await self._send.send(
                        BatchBackoff(seconds=round(seconds, 3), reason=f"rate limited ({task.id})")
                    )
                elif result.ok:
                    self._gate.passed()
                if kind not in RETRIED_KINDS or attempt == self._options.max_attempts:
                    async with self._recording:
                        await anyio.to_thread.run_sync(self._output.record, result)
                    async with self._reporting:
                        self._done += 1
                        self._failed += not result.ok
                        self._running.discard(task.id)
                        await self._send.send(
                            TaskFinished(
                                result=result,
                                done=self._done,
                                failed=self._failed,
                                running=len(self._running),
                            )
                        )
                    return
        finally:
            self._running.discard(task.id)
            slots.release()

    async def _attempt(self, task: Task, attempt: int) -> TaskResult:
        workspace, log = await anyio.to_thread.run_sync(self._output.begin, task)
        started = time.monotonic()
        tool_calls = 0
        cost: ReportedCost | None = None

        def on_event(event: Event) -> None:
            nonlocal tool_calls, cost
            tool_calls += isinstance(event, ToolCallStarted)
            if isinstance(event, SessionUpdated) and event.update == "usage_update":
                cost = reported_cost(event.data.get("cost")) or cost
            log.write(event)

        try:
            outcome = await self._executor.run(task, workspace, on_event)
            # Graded before the attempt counts as finished: a crash mid-verify re-runs it.
            grade = await self._grade(task, workspace) if task.verify is not None else None
        except BaseException:
            log.stop(self._executor.agent_of(task))
            raise
        await anyio.to_thread.run_sync(log.commit)
        # The agent as its events name it (an ACP agent names itself in ``initialize``).
        agent = log.agent or self._executor.agent_of(task)
        return TaskResult(
            task_id=task.id,
            ok=outcome.ok,
            error=outcome.error,
            answer=outcome.answer,
            files_changed=[
                FileChange(path=relative_to(f.path, workspace), change=f.change)
                for f in outcome.files_changed
            ],
            usage=outcome.usage,
            duration_s=round(time.monotonic() - started, 3),
            attempts=attempt,
            session_id=outcome.session_id,
            resume=f"gemini --resume {outcome.session_id}"
            if outcome.session_id and agent == "gemini"
            else None,
            workspace=workspace,
            agent=agent,
            grade=grade,
            tool_calls=tool_calls,
            agent_cost=cost,
        )


def only_gemwire_error(group: BaseExceptionGroup[BaseException]) -> GemwireError | None:
    """The first gemwire error of a group holding nothing else (else None)."""
    ours, rest = group.split(GemwireError)
    if ours is None or rest is not None:
        return None
    first: BaseException = ours
    while isinstance(first, BaseExceptionGroup):
        first = first.exceptions[0]
    return first if isinstance(first, GemwireError) else None
