"""``ray``: the same tasks on a Ray cluster, one worker actor per node running the local mode.

The driver (this process) keeps everything that makes a batch resumable: it reads the tasks,
prepares workspaces, writes events and ``results.jsonl``. Each node's actor makes its own
executor and grader there (`Node`: a batch's ``process`` or ``acp`` executor, an eval's,
sandboxed on that node), runs its share of the tasks with them as on one machine, grades
each on the node once its agent has finished, and sends the task's events, outcome and grade
back as bytes. Ray places the actors (one per alive node, pinned to it, each declaring the
CPUs its share of the concurrency needs); gemwire schedules nothing itself.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Self

import anyio
import msgspec
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from gemwire import errors
from gemwire.batch.results import Grade, Outcome
from gemwire.batch.tasks import Task
from gemwire.errors import GemwireError
from gemwire.events import Event, FileChanged, TokenUsage, TurnError, decode_event

if TYPE_CHECKING:
    from gemwire.batch.runner import BatchOptions, Executor, Grader

__all__ = ("STOP_GRACE", "Node", "RayExecutor")

STOP_GRACE = 15.0
"""Seconds the workers get to stop their agents when the batch ends."""

Node = Callable[[], AbstractAsyncContextManager[tuple["Executor", "Grader"]]]
"""Makes, on a node, the executor (not yet entered) and the grader its tasks run with:
picklable (a module's function, or a ``partial`` of one), so that what it finds (the
agents, bubblewrap) is the node's own."""


class _Outcome(msgspec.Struct, frozen=True, kw_only=True):
    """An outcome as it crosses the cluster (Ray pickles it)."""

    ok: bool
    error: TurnError | None
    answer: str = ""
    files_changed: list[FileChanged] = []
    usage: TokenUsage | None = None
    session_id: str | None = None
    grade: Grade | None = None
    """The task's ``verify`` run on the node, after its agent."""
    raised: tuple[str, str] | None = None
    """A gemwire error the worker's executor raised: its class name and message."""


class _Job(msgspec.Struct, frozen=True, kw_only=True):
    task: Task
    cwd: str


def _job(task: Task, cwd: str) -> _Job:
    if task.verify_files is not None:  # read on the node, whose working folder is Ray's
        task = msgspec.structs.replace(task, verify_files=os.path.abspath(task.verify_files))
    return _Job(task=task, cwd=cwd)


def _raised(exc: Exception) -> tuple[str, str]:
    if isinstance(exc, GemwireError):
        return type(exc).__name__, str(exc)
    return "GemwireError", f"a Ray worker could not start: {exc!r}"


class Worker:
    """A node's share of the batch: one local executor, owned by one long ``serve`` call
    (an executor must be entered and left in one task), fed jobs by ``run`` calls."""

    def __init__(self, node: Node) -> None:
        self._node = node
        self._jobs, self._inbox = anyio.create_memory_object_stream[
            tuple[_Job, list[bytes], anyio.Event, list[_Outcome]]
        ](1 << 16)
        # Whether ``serve`` started (None) or why not, for ``ready``.
        self._say, self._said = anyio.create_memory_object_stream[tuple[str, str] | None](1)

    async def serve(self) -> None:
        started = False
        try:
            async with self._node() as (executor, grade), executor:
                started = True
                self._say.send_nowait(None)
                async with anyio.create_task_group() as group:
                    async for job in self._inbox:
                        group.start_soon(self._one, executor, grade, *job)
        except Exception as exc:
            if started:
                raise
            self._say.send_nowait(_raised(exc))  # raised in the driver (no sandbox on this node)

    async def ready(self) -> tuple[str, str] | None:
        """None once ``serve`` can take jobs; else the error that stopped it."""
        return await self._said.receive()

    async def _one(
        self,
        executor: Executor,
        grade: Grader,
        job: _Job,
        events: list[bytes],
        done: anyio.Event,
        out: list[_Outcome],
    ) -> None:
        encode = msgspec.json.encode
        task = job.task
        try:
            outcome = await executor.run(task, job.cwd, lambda e: events.append(encode(e)))
            # Here, not in the driver: the verifier runs where the agent ran, sandboxed alike.
            graded = await grade(task, job.cwd) if task.verify is not None else None
        except GemwireError as exc:  # sent back to be raised in the driver, as locally
            out.append(_Outcome(ok=False, error=None, raised=_raised(exc)))
        else:
            out.append(
                _Outcome(
                    ok=outcome.ok,
                    error=outcome.error,
                    answer=outcome.answer,
                    files_changed=outcome.files_changed,
                    usage=outcome.usage,
                    session_id=outcome.session_id,
                    grade=graded,
                )
            )
        finally:
            done.set()

    async def run(self, job: _Job) -> tuple[_Outcome, bytes]:
        events: list[bytes] = []
        done = anyio.Event()
        out: list[_Outcome] = []
        await self._jobs.send((job, events, done, out))
        await done.wait()
        if not out:
            raise RuntimeError("the worker's executor failed; see the actor's log")
        return out[0], b"\n".join(events)


class RayExecutor:
    """Sends each task to a node's worker, which runs it with what ``node`` makes there;
    ``names`` (an executor never entered) names each task's agent in the driver. Give the
    engine `grade` as its grader: the grade the task's node sent back."""

    def __init__(self, names: Executor, node: Node, options: BatchOptions) -> None:
        self._names = names
        self._node = node
        self._concurrency = options.concurrency
        self._address = options.ray_address
        self._workers: list[Any] = []
        self._serving: list[Any] = []
        self._next: itertools.cycle[Any] | None = None
        self._started_ray = False
        self._grades: dict[str, Grade] = {}
        self._getting = 0
        """``ray.get`` calls still waiting in threads (a cancelled ``run`` leaves its own)."""
        self._got = threading.Condition()

    def agent_of(self, task: Task) -> str:
        return self._names.agent_of(task)

    async def __aenter__(self) -> Self:
        await anyio.to_thread.run_sync(self._start)
        return self

    def _start(self) -> None:
        if not ray.is_initialized():
            ray.init(address=self._address, log_to_driver=False, include_dashboard=False)
            self._started_ray = True
        nodes = [n for n in ray.nodes() if n["Alive"] and n["Resources"].get("CPU", 0) > 0]
        share = max(1, -(-self._concurrency // len(nodes)))
        remote = ray.remote(Worker)
        for node in nodes:
            worker = remote.options(
                num_cpus=min(share, node["Resources"]["CPU"]),
                max_concurrency=share + 3,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False),
            ).remote(self._node)
            self._workers.append(worker)
            self._serving.append(worker.serve.remote())
        # Every node ready before the first task: one that cannot (no bubblewrap for
        # --sandbox) stops the run here, with its typed error, and nothing runs elsewhere.
        said = ray.get([worker.ready.remote() for worker in self._workers])
        refused = next((s for s in said if s is not None), None)
        if refused is not None:
            self._stop()
            raise _error(refused)
        self._next = itertools.cycle(self._workers)

    async def run(self, task: Task, cwd: str, on_event: Callable[[Event], None]) -> Outcome:
        assert self._next is not None
        ref = next(self._next).run.remote(_job(task, cwd))
        with self._got:
            self._getting += 1
        try:
            got = await anyio.to_thread.run_sync(self._get, ref, abandon_on_cancel=True)
        except BaseException:
            ray.cancel(ref)
            raise
        outcome: _Outcome = got[0]
        events: bytes = got[1]
        for line in events.split(b"\n") if events else ():
            on_event(decode_event(line))
        if outcome.raised:
            raise _error(outcome.raised)
        if outcome.grade is not None:
            self._grades[cwd] = outcome.grade
        return outcome

    def _get(self, ref: Any) -> Any:
        try:
            return ray.get(ref)
        finally:
            with self._got:
                self._getting -= 1
                self._got.notify_all()

    async def grade(self, task: Task, workspace: str) -> Grade:
        """The grade the task's node gave it (`run` has returned it)."""
        return self._grades.pop(workspace)

    async def __aexit__(self, *exc_info: object) -> None:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(self._stop)

    def _stop(self) -> None:
        # Cancelling ``serve`` lets each worker stop its agents as a local batch would;
        # killing the actor is for a worker that does not answer.
        for serving in self._serving:
            ray.cancel(serving)
        ray.wait(self._serving, num_returns=len(self._serving), timeout=STOP_GRACE)
        for worker in self._workers:
            ray.kill(worker)
        # Not shut down under a thread still in ``ray.get`` (it returns once its worker is gone).
        with self._got:
            self._got.wait_for(lambda: self._getting == 0, timeout=STOP_GRACE)
        if self._started_ray:
            ray.shutdown()


def _error(raised: tuple[str, str]) -> GemwireError:
    name, message = raised
    error: GemwireError = getattr(errors, name, GemwireError)(message)
    return error
