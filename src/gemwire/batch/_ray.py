"""``ray``: the same tasks on a Ray cluster, one worker actor per node running the local mode.

The driver (this process) keeps everything that makes a batch resumable: it reads the tasks,
prepares workspaces, writes events and ``results.jsonl``. Each node's actor runs its share of
the tasks with the ``process`` or ``acp`` executor, as on one machine, and sends each task's
events and outcome back as bytes. Ray places the actors (one per alive node, pinned to it,
each declaring the CPUs its share of the concurrency needs); gemwire schedules nothing itself.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, Self

import anyio
import msgspec
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from gemwire import errors
from gemwire.batch.results import Outcome
from gemwire.batch.tasks import Task
from gemwire.errors import GemwireError
from gemwire.events import Event, FileChanged, TokenUsage, TurnError, decode_event

__all__ = ("STOP_GRACE", "RayExecutor")

STOP_GRACE = 15.0
"""Seconds the workers get to stop their agents when the batch ends."""


class _Outcome(msgspec.Struct, frozen=True, kw_only=True):
    """An outcome as it crosses the cluster (Ray pickles it)."""

    ok: bool
    error: TurnError | None
    answer: str = ""
    files_changed: list[FileChanged] = []
    usage: TokenUsage | None = None
    session_id: str | None = None
    raised: tuple[str, str] | None = None
    """A gemwire error the worker's executor raised: its class name and message."""


class _Job(msgspec.Struct, frozen=True, kw_only=True):
    task: Task
    cwd: str


class Worker:
    """A node's share of the batch: one local executor, owned by one long ``serve`` call
    (an executor must be entered and left in one task), fed jobs by ``run`` calls."""

    def __init__(self, options: Any) -> None:
        self._options = options
        self._jobs, self._inbox = anyio.create_memory_object_stream[
            tuple[_Job, list[bytes], anyio.Event, list[_Outcome]]
        ](1 << 16)

    async def serve(self) -> None:
        from gemwire.batch.runner import local_executor

        async with local_executor(self._options) as executor, anyio.create_task_group() as group:
            async for job in self._inbox:
                group.start_soon(self._one, executor, *job)

    async def _one(
        self,
        executor: Any,
        job: _Job,
        events: list[bytes],
        done: anyio.Event,
        out: list[_Outcome],
    ) -> None:
        encode = msgspec.json.encode
        try:
            outcome = await executor.run(job.task, job.cwd, lambda e: events.append(encode(e)))
        except GemwireError as exc:  # sent back to be raised in the driver, as locally
            out.append(_Outcome(ok=False, error=None, raised=(type(exc).__name__, str(exc))))
        else:
            out.append(
                _Outcome(
                    ok=outcome.ok,
                    error=outcome.error,
                    answer=outcome.answer,
                    files_changed=outcome.files_changed,
                    usage=outcome.usage,
                    session_id=outcome.session_id,
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
    """Sends each task to a node's worker; ``address`` as for ``ray.init`` (None: a local
    cluster started for the batch)."""

    def __init__(self, options: Any, address: str | None) -> None:
        self._options = options
        self._address = address
        self._workers: list[Any] = []
        self._serving: list[Any] = []
        self._next: itertools.cycle[Any] | None = None
        self._started_ray = False
        from gemwire.batch.runner import local_executor

        # Names only: the executor itself is made on each node.
        self._names = local_executor(options)

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
        share = max(1, -(-self._options.concurrency // len(nodes)))
        remote = ray.remote(Worker)
        for node in nodes:
            worker = remote.options(
                num_cpus=min(share, node["Resources"]["CPU"]),
                max_concurrency=share + 2,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False),
            ).remote(self._options)
            self._workers.append(worker)
            self._serving.append(worker.serve.remote())
        self._next = itertools.cycle(self._workers)

    async def run(self, task: Task, cwd: str, on_event: Callable[[Event], None]) -> Outcome:
        assert self._next is not None
        ref = next(self._next).run.remote(_Job(task=task, cwd=cwd))
        try:
            got = await anyio.to_thread.run_sync(ray.get, ref, abandon_on_cancel=True)
        except BaseException:
            ray.cancel(ref)
            raise
        outcome: _Outcome = got[0]
        events: bytes = got[1]
        for line in events.split(b"\n") if events else ():
            on_event(decode_event(line))
        if outcome.raised:
            name, message = outcome.raised
            raise getattr(errors, name, errors.GemwireError)(message)
        return outcome

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
        if self._started_ray:
            ray.shutdown()
