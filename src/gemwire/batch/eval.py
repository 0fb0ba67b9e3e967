"""``gemwire eval``: every task, several attempts, several agents, each attempt graded.

    async with run_eval(read_tasks("tasks.jsonl"), "out", EvalOptions(agents=("gemini", "qwen"), k=5)) as run:
        async for progress in run:
            ...

An eval is a batch (docs/batch.md) over its attempts: task ``fix-1``'s third attempt by
``qwen`` is the batch task ``fix-1.qwen.3``, with its own fresh copy of the template and
its own line in ``results.jsonl`` (graded by the task's ``verify``). So an eval resumes as
a batch does, every attempt exactly once across a SIGTERM or a ``kill -9``. ``gemini`` runs
as Gemini CLI over stream-json (one process an attempt); every other agent over ACP, in
long-lived pools serving many attempts, or, sandboxed, a process an attempt in the
attempt's sandbox (`SandboxedAcp`).
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Self

import anyio
import msgspec

from gemwire.batch._acp import AcpExecutor, gemini_acp_options
from gemwire.batch._budget import Budget
from gemwire.batch._files import read_regular
from gemwire.batch._process import ProcessExecutor
from gemwire.batch._sandboxed import SandboxedGemini, Sandboxing
from gemwire.batch._sandboxed_acp import SandboxedAcp
from gemwire.batch.results import Grade, Outcome
from gemwire.batch.runner import Batch, BatchOptions, Executor, Grader, run_with
from gemwire.batch.sandbox import Bubblewrap
from gemwire.batch.tasks import Task, check_tasks
from gemwire.batch.verify import verify
from gemwire.errors import BatchOutputError, InvalidOptions, InvalidTasks
from gemwire.events import Event, TurnCompleted
from gemwire.runners.acp import AcpOptions
from gemwire.runners.agents import AGENTS

__all__ = ("EvalOptions", "attempt_id", "expand", "parse_attempt_id", "run_eval")

SETTINGS = "eval.json"
"""In the output folder: what every attempt of the eval shares (whether it is sandboxed)."""
STREAM_JSON = "gemini"
"""The agent run as ``gemini -p`` over stream-json; the others run over ACP."""


_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A configured agent's name: it is part of its attempts' ids (``add.mine.2``)."""


class EvalOptions(msgspec.Struct, frozen=True, kw_only=True):
    """Which agents, how many attempts each, and the batch that runs them."""

    agents: tuple[str, ...]
    """Agent names (docs/agents.md): ``gemini`` over stream-json, the others over ACP; or
    a name of ``commands``."""
    commands: dict[str, tuple[str, ...]] = {}
    """Configured agents: a name (no built-in agent's) to the command that starts it, an ACP
    agent (as ``gemwire serve --agent NAME=COMMAND``)."""
    mode: str | None = None
    """The mode every session of a configured agent is put in (`AcpOptions.mode`): gemwire
    makes the agents it knows ask before acting, and refuses an agent whose modes it does
    not know (`PermissionsUnenforceable`, each attempt kind ``agent``) unless one is chosen."""
    k: int = 1
    """Attempts of each task by each agent (a task's ``attempts`` wins)."""
    batch: BatchOptions = BatchOptions()
    """Concurrency, Gemini CLI's options, retries, ...; ``mode`` and ``agent`` are eval's."""
    sandbox: bool = False
    """Run each attempt's agent and verifier in a sandbox (`gemwire.batch.sandbox`; bubblewrap)."""

    def __post_init__(self) -> None:
        if not self.agents:
            raise InvalidOptions("name at least one agent")
        for name, command in self.commands.items():
            if name in AGENTS:
                raise InvalidOptions(f"{name!r} is a built-in agent: name the command otherwise")
            if not _NAME.fullmatch(name):
                raise InvalidOptions(f"agent name {name!r} is not 1-64 of A-Z a-z 0-9 _ -")
            if not command:
                raise InvalidOptions(f"agent {name!r} has an empty command")
        if self.mode is not None and not self.commands:
            raise InvalidOptions("mode is for the configured agents (commands): there is none")
        unknown = [a for a in self.agents if a not in AGENTS and a not in self.commands]
        if unknown:
            known = ", ".join([*AGENTS, *self.commands])
            raise InvalidOptions(f"unknown agent {unknown[0]!r}; known: {known}")
        if len(set(self.agents)) != len(self.agents):
            raise InvalidOptions("an agent is named twice")
        if self.k < 1:
            raise InvalidOptions("k must be 1 or more")


def attempt_id(task_id: str, agent: str, attempt: int) -> str:
    return f"{task_id}.{agent}.{attempt}"


def parse_attempt_id(batch_id: str) -> tuple[str, str, int]:
    """The task, agent and attempt number of an eval's batch task id."""
    task_id, agent, attempt = batch_id.rsplit(".", 2)  # agents' names hold no dot
    return task_id, agent, int(attempt)


def expand(tasks: Sequence[Task], options: EvalOptions) -> list[Task]:
    """The batch tasks of an eval: attempt by attempt, so every agent's first attempts of
    every task come before anyone's second (a run stopped early has evened-out results)."""
    check_tasks(tasks)
    most = max(t.attempts or options.k for t in tasks)
    attempts = [
        msgspec.structs.replace(
            task,
            id=attempt_id(task.id, agent, n),
            agent=None if agent == STREAM_JSON else agent,
        )
        for n in range(1, most + 1)
        for task in tasks
        if n <= (task.attempts or options.k)
        for agent in options.agents
    ]
    too_long = [a.id for a in attempts if len(a.id) > 128]
    if too_long:
        raise InvalidTasks(
            f"attempt id {too_long[0]!r} is over 128 characters: shorten the task's id",
            problems=[f"attempt id {i!r} is over 128 characters" for i in too_long],
        )
    return attempts


@asynccontextmanager
async def run_eval(
    tasks: Sequence[Task], output: str | Path, options: EvalOptions
) -> AsyncGenerator[Batch]:
    """Run the eval's attempts not yet finished in ``output`` (a batch's progress)."""
    attempts = expand(tasks, options)
    batch = msgspec.structs.replace(options.batch, mode="acp", agent=None)
    await anyio.to_thread.run_sync(_same_sandboxing, Path(output), options.sandbox)
    hidden = await anyio.to_thread.run_sync(_hidden, Path(output), tasks)
    here = partial(_on_this_machine, options, batch, hidden)
    if batch.ray:  # each node makes its own executor and sandbox, and grades there
        from gemwire.batch._ray import RayExecutor

        ray = RayExecutor(_Mixed(batch, options), here, batch)
        async with run_with(attempts, output, batch, ray, ray.grade) as running:
            yield running
        return
    async with (
        here() as (executor, grade),
        run_with(attempts, output, batch, executor, grade) as running,
    ):
        yield running


def _hidden(output: Path, tasks: Sequence[Task]) -> tuple[str, ...]:
    """What no sandbox may see: the output folder and the hidden tests (absolute: a Ray
    node's working folder is not this one)."""
    files = sorted({os.path.abspath(t.verify_files) for t in tasks if t.verify_files})
    return (str(output.resolve()), *files)


@asynccontextmanager
async def _on_this_machine(
    options: EvalOptions, batch: BatchOptions, hidden: tuple[str, ...]
) -> AsyncGenerator[tuple[Executor, Grader]]:
    """The attempts' executor and grader on this machine (a Ray node's, with ``ray``):
    sandboxed, with ``hidden`` out of every sandbox's sight, or not."""
    if not options.sandbox:
        executor = _Budgeted(_Mixed(batch, options))
        yield executor, executor.graded(verify)
        return
    sandboxing = Sandboxing(await Bubblewrap.found(), batch.gemini, hidden=hidden)

    async def grade(task: Task, workspace: str) -> Grade:
        return await verify(task, workspace, confine=sandboxing.verifier(workspace))

    async with sandboxing:
        sandboxed = _Budgeted(_Mixed(batch, options, sandboxing=sandboxing))
        yield sandboxed, sandboxed.graded(grade)


class _Settings(msgspec.Struct, frozen=True):
    sandbox: bool


def _same_sandboxing(output: Path, sandbox: bool) -> None:
    """Record in ``output/eval.json`` whether its attempts run sandboxed, and refuse to
    resume it otherwise: an eval is sandboxed whole or not at all."""
    path = output / SETTINGS
    try:
        if path.is_file():
            started = msgspec.json.decode(read_regular(path, 4096), type=_Settings).sandbox
            if started != sandbox:
                flag = "with" if started else "without"
                raise InvalidOptions(f"{output} was started {flag} --sandbox: resume it so")
            return
        output.mkdir(parents=True, exist_ok=True)
        path.write_bytes(msgspec.json.encode(_Settings(sandbox=sandbox)))
    except (OSError, msgspec.DecodeError) as exc:
        raise BatchOutputError(f"cannot read or write {path}: {exc}") from exc


class _Mixed:
    """Gemini CLI over stream-json for tasks naming no agent; ACP for the others: in pools,
    or with ``sandboxing`` a process an attempt, each in the attempt's sandbox. A configured
    agent (`EvalOptions.commands`) is an ACP executor of its own, running its command."""

    def __init__(
        self, options: BatchOptions, eval_: EvalOptions, *, sandboxing: Sandboxing | None = None
    ) -> None:
        acp = gemini_acp_options(options.gemini)
        stream_json = STREAM_JSON in eval_.agents
        self._stack = AsyncExitStack()
        self._process: Executor | None = None
        self._acp: Executor
        self._configured: dict[str, Executor] = {}
        if sandboxing is not None:
            if stream_json:
                self._process = SandboxedGemini(options.gemini, sandboxing)
            self._acp = SandboxedAcp(acp, sandboxing)
            for name, command in eval_.commands.items():
                configured = msgspec.structs.replace(acp, command=command, mode=eval_.mode)
                self._configured[name] = SandboxedAcp(configured, sandboxing)
            return
        self._process = ProcessExecutor(options.gemini) if stream_json else None
        self._acp = self._pool(options, acp)
        for name, command in eval_.commands.items():
            configured = msgspec.structs.replace(acp, command=command, mode=eval_.mode)
            self._configured[name] = self._pool(options, configured)

    @staticmethod
    def _pool(options: BatchOptions, acp: AcpOptions) -> Executor:
        return AcpExecutor(
            acp,
            agent=None,
            agents=options.agents,
            sessions_per_agent=options.sessions_per_agent,
            concurrency=options.concurrency,
        )

    def _of(self, task: Task) -> tuple[Executor, Task]:
        """The executor of ``task``'s agent, and the task as it takes it (a configured
        agent's executor runs its own command for a task naming none)."""
        if task.agent is None:
            assert self._process is not None
            return self._process, task
        configured = self._configured.get(task.agent)
        if configured is not None:
            return configured, msgspec.structs.replace(task, agent=None)
        return self._acp, task

    def agent_of(self, task: Task) -> str:
        executor, task = self._of(task)
        return executor.agent_of(task)

    async def run(self, task: Task, cwd: str, on_event: Callable[[Event], None]) -> Outcome:
        executor, task = self._of(task)
        return await executor.run(task, cwd, on_event)

    async def __aenter__(self) -> Self:
        async with AsyncExitStack() as stack:
            if self._process is not None:
                await stack.enter_async_context(self._process)
            await stack.enter_async_context(self._acp)
            for executor in self._configured.values():
                await stack.enter_async_context(executor)
            self._stack = stack.pop_all()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._stack.aclose()


class _Budgeted:
    """``executor``, stopping each attempt that goes over its task's budget (`Budget`)."""

    def __init__(self, executor: Executor) -> None:
        self._executor = executor
        self._over_budget: dict[str, str] = {}
        """Why each attempt that went over its budget did, until it is graded."""

    def agent_of(self, task: Task) -> str:
        return self._executor.agent_of(task)

    async def run(self, task: Task, cwd: str, on_event: Callable[[Event], None]) -> Outcome:
        self._over_budget.pop(task.id, None)  # a retried attempt starts afresh
        budget = Budget.of(task)
        if budget is None:
            return await self._executor.run(task, cwd, on_event)
        outcome: Outcome | None = None
        with anyio.CancelScope() as scope:

            def counted(event: Event) -> None:
                on_event(event)
                if budget.spent_by(event) is not None and not isinstance(event, TurnCompleted):
                    scope.cancel()  # the executor stops the turn (an ACP turn is cancelled)

            outcome = await self._executor.run(task, cwd, counted)
        if budget.over is None:
            assert outcome is not None
            return outcome
        self._over_budget[task.id] = budget.over
        return budget.ended(outcome)

    def graded(self, grade: Grader) -> Grader:
        """``grade``, except for an attempt over its budget: failed, reward 0, not verified
        (what it did, it did with more than it was allowed)."""

        async def graded(task: Task, workspace: str) -> Grade:
            over = self._over_budget.pop(task.id, None)
            if over is None:
                return await grade(task, workspace)
            why = f"not verified: the attempt went over its budget ({over})"
            return Grade(status="failed", reward=0.0, exit_code=None, output=why, duration_s=0.0)

        return graded

    async def __aenter__(self) -> Self:
        await self._executor.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._executor.__aexit__(*exc_info)
