"""Batches over HTTP: run `gemwire.batch` on the server and watch it (docs/server.md).

    POST /v1/batches                     {"tasks": "tasks.jsonl" | [tasks], "output": "out",
                                          "agent"?, "concurrency"?, "timeout"?, "permissions"?}
                                         or {"open": "out"} (an output folder, read-only)
    GET  /v1/batches                     {"batches": [batch]}
    GET  /v1/batches/{id}                batch: done, failed, running, pending, eta_s, ...
    GET  /v1/batches/{id}/events         SSE of {"seq", "progress"} envelopes (?after=N)
    POST /v1/batches/{id}/retry-failed   run again what failed or did not finish
    GET  /v1/batches/{id}/tasks          {"tasks": [{"id", "status", "attempts", ...}]}
    GET  /v1/batches/{id}/tasks/{task}/events   the task's events, {"seq", "event"} each

Every path (the tasks file, the output folder, each task's workspace or template) must lie
under the server's roots (`confine`). A task with neither workspace nor template runs in
the first root.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import AsyncIterator

import anyio
import msgspec
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from gemwire._portable import O_BINARY, O_NOFOLLOW, O_NONBLOCK
from gemwire.batch import BatchOptions
from gemwire.errors import BatchOutputError, InvalidOptions, InvalidTasks
from gemwire.serve_api import Batches, BatchRequest, TaskRow, TaskRows
from gemwire.server.batch_inputs import output_folder, placed_tasks
from gemwire.server.batch_manager import BatchManager
from gemwire.server.batches import (
    BatchSpec,
    ServerBatch,
    event_file_ids,
    new_batch_id,
    now_iso,
    whole_lines,
)
from gemwire.server.envelopes import after_seq
from gemwire.server.paths import confine
from gemwire.server.responses import (
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    JsonResponse,
    NotFound,
    read_json,
)
from gemwire.server.state import app_state

__all__ = ("ROUTES",)

_TASK_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
"""A batch's task ids (`gemwire.batch.tasks`): file names in its output folder."""

DEFAULT_EVENTS_LIMIT = 1000
RUN_END_WAIT = 30.0
"""Seconds a retry waits for a run whose end is logged to let go of its output folder."""
MAX_EVENTS_FILE = 256 * 1024 * 1024
"""A task's events file read for ``/tasks/{id}/events``: larger is refused (422)."""


class EventStream(StreamingResponse):
    """An SSE response that ends as soon as the client goes away, whatever ASGI version
    the server speaks (from 2.4 Starlette would notice only at the next write: up to a
    keep-alive later)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async with anyio.create_task_group() as group:

            async def stream() -> None:
                with contextlib.suppress(OSError):  # the client went away mid-write
                    await self.stream_response(send)
                group.cancel_scope.cancel()

            group.start_soon(stream)
            await self.listen_for_disconnect(receive)
            group.cancel_scope.cancel()


def _manager(request: Request) -> BatchManager:
    manager = app_state(request).batches
    assert manager is not None, "the lifespan starts the batch manager"
    return manager


def _refuse_during_shutdown(request: Request) -> None:
    """A batch started now would run into the shutdown (503, as a new session is)."""
    if app_state(request).shutting_down.is_set():
        raise ApiError("the server is shutting down", status=503, kind="limit")


def _batch(request: Request) -> ServerBatch:
    batch = _manager(request).get(request.path_params["batch_id"])
    if batch is None:
        raise NotFound(f"no batch {request.path_params['batch_id']!r}")
    return batch


def _options(request: Request, spec: BatchSpec, *, retry_failed: bool = False) -> BatchOptions:
    """The batch's agent as the server runs it (`AgentLauncher.options`), with its timeout
    and permissions."""
    assert spec.agent is not None
    state = app_state(request)
    acp = state.launcher.options(spec.agent, state.config.roots[0])
    acp = msgspec.structs.replace(acp, timeout=spec.timeout, permissions=spec.permissions)
    return BatchOptions(
        mode="acp", acp=acp, concurrency=spec.concurrency, retry_failed=retry_failed
    )


async def _start(manager: BatchManager, batch: ServerBatch, options: BatchOptions) -> None:
    try:
        await manager.start(batch, options)
    except InvalidTasks as exc:
        raise BadRequest(str(exc)) from exc
    except (InvalidOptions, BatchOutputError) as exc:  # the folder in use, or damaged
        raise Conflict(str(exc)) from exc


async def create_batch(request: Request) -> Response:
    body = await read_json(request, BatchRequest)
    state = app_state(request)
    roots = state.config.roots
    manager = _manager(request)
    if body.open is not None:
        if body.tasks is not None or body.output is not None:
            raise BadRequest("give open, or tasks and output, not both")
        return await _open(manager, confine(body.open, roots))
    if body.tasks is None or body.output is None:
        raise BadRequest("a batch needs tasks and output (or open, to look at one)")
    _refuse_during_shutdown(request)
    if not 1 <= body.concurrency <= state.config.max_sessions:
        raise BadRequest(f"concurrency must be 1 to {state.config.max_sessions}")
    if body.timeout is not None and not body.timeout > 0:
        raise BadRequest("timeout must be over 0")
    tasks = await anyio.to_thread.run_sync(placed_tasks, body.tasks, roots)
    output = output_folder(body.output, roots)
    running = manager.by_output(output)
    if running is not None and running.status == "running":
        raise Conflict(f"batch {running.spec.id} is writing to {output}")
    spec = BatchSpec(
        id=new_batch_id(),
        output=output,
        created=now_iso(),
        agent=body.agent,
        tasks=tasks,
        concurrency=body.concurrency,
        timeout=body.timeout,
        permissions=body.permissions,
    )
    options = _options(request, spec)  # an unknown agent: 404 before anything is kept
    try:
        batch = await manager.add(spec)
    except BatchOutputError as exc:
        raise Conflict(str(exc)) from exc
    try:
        await _start(manager, batch, options)
    except BaseException:
        await manager.forget(batch)
        raise
    return JsonResponse(batch.view(), 201)


async def _open(manager: BatchManager, folder: str) -> Response:
    known = manager.by_output(folder)
    if known is not None:
        return JsonResponse(known.view(), 200)
    if not await anyio.to_thread.run_sync(os.path.isfile, os.path.join(folder, "results.jsonl")):
        raise BadRequest(f"{folder} is not a batch's output folder (no results.jsonl)")
    spec = BatchSpec(id=new_batch_id(), output=folder, created=now_iso())
    try:
        batch = await manager.add(spec)
    except BatchOutputError as exc:
        raise Conflict(str(exc)) from exc
    return JsonResponse(batch.view(), 201)


async def list_batches(request: Request) -> Response:
    manager = _manager(request)
    batches = list(manager.batches.values())
    await anyio.to_thread.run_sync(_refresh, batches)
    return JsonResponse(Batches([b.view() for b in batches]))


def _refresh(batches: list[ServerBatch]) -> None:
    """An opened folder may be another process's batch: its results are read again."""
    for batch in batches:
        if batch.read_only:
            try:
                batch.load()
            except BatchOutputError as exc:  # damaged since: listed, saying so
                batch.fail(exc)


async def get_batch(request: Request) -> Response:
    batch = _batch(request)
    await anyio.to_thread.run_sync(_refresh, [batch])
    return JsonResponse(batch.view())


async def list_tasks(request: Request) -> Response:
    batch = _batch(request)

    def look() -> list[TaskRow]:
        _refresh([batch])
        on_disk = event_file_ids(batch.spec.output, _is_task_id) if batch.read_only else []
        return batch.task_rows(on_disk)

    return JsonResponse(TaskRows(tasks=await anyio.to_thread.run_sync(look)))


def _is_task_id(name: str) -> bool:
    return _TASK_ID.fullmatch(name) is not None


def _limit(request: Request) -> int:
    raw = request.query_params.get("limit") or str(DEFAULT_EVENTS_LIMIT)
    if not (
        raw.isascii() and raw.isdigit() and len(raw) <= 4 and 0 < int(raw) <= DEFAULT_EVENTS_LIMIT
    ):
        raise BadRequest(f"limit must be 1 to {DEFAULT_EVENTS_LIMIT}, not {raw[:40]!r}")
    return int(raw)


def _wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


async def batch_events(request: Request) -> Response:
    batch = _batch(request)
    after = after_seq(request)
    if _wants_json(request):
        chosen = batch.envelopes[after : after + _limit(request)]
        body = b'{"events":[' + b",".join(chosen) + b'],"last_seq":%d}' % batch.last_seq
        return Response(body, media_type="application/json")
    manager = _manager(request)

    async def stream() -> AsyncIterator[bytes]:
        async for envelope in manager.follow(batch, after):
            if envelope is None:
                yield b": keep-alive\n\n"
                continue
            seq = envelope[len(b'{"seq":') : envelope.index(b",")]
            yield b"id: " + seq + b"\nevent: gemwire\ndata: " + envelope + b"\n\n"

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return EventStream(stream(), media_type="text/event-stream", headers=headers)


def _confine_again(spec: BatchSpec, roots: tuple[str, ...]) -> None:
    """Every path of a kept batch confined to the roots again: since it was made, a folder
    may have been replaced by a symlink, the server restarted with other roots, or its
    ``batch.json`` edited. `Forbidden` for one that now leads elsewhere."""
    kept = [spec.output] + [
        path for task in spec.tasks or () for path in (task.workspace, task.template) if path
    ]
    for path in kept:
        real = output_folder(path, roots) if path == spec.output else confine(path, roots)
        if real != path:
            raise Forbidden(
                f"{path!r} now leads to {real}, not to the folder the batch was made with"
            )


async def retry_failed(request: Request) -> Response:
    batch = _batch(request)
    if batch.read_only:
        raise Conflict(f"batch {batch.spec.id} was opened read-only: its tasks are not known")
    await anyio.to_thread.run_sync(_confine_again, batch.spec, app_state(request).config.roots)
    with anyio.move_on_after(RUN_END_WAIT):  # its end is logged: it is closing its folder
        await batch.wait_ended()
    if batch.status == "running":
        raise Conflict(f"batch {batch.spec.id} is running")
    _refuse_during_shutdown(request)
    await _start(_manager(request), batch, _options(request, batch.spec, retry_failed=True))
    return JsonResponse(batch.view(), 202)


def _task_lines(folder: str, task_id: str) -> list[bytes]:
    events = os.path.join(folder, "events")
    for name in (f"{task_id}.jsonl", f"{task_id}.jsonl.part"):
        path = os.path.join(events, name)
        try:
            fd = os.open(path, os.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_BINARY)
        except FileNotFoundError:
            continue
        except OSError as exc:  # a symlink (O_NOFOLLOW), a folder, no permission
            raise ApiError(
                f"the events of task {task_id!r} cannot be read: {exc.strerror}",
                status=422,
                kind="unreadable",
            ) from exc
        with os.fdopen(fd, "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_EVENTS_FILE:
                raise ApiError(
                    f"the events of task {task_id!r} are not a file gemwire wrote (a regular "
                    f"file of at most {MAX_EVENTS_FILE} bytes)",
                    status=422,
                    kind="unreadable",
                )
            data = file.read()
        return whole_lines(data)
    raise NotFound(f"task {task_id!r} has no events yet")


async def task_events(request: Request) -> Response:
    batch = _batch(request)
    task_id = request.path_params["task_id"]
    known = batch.spec.tasks is None or any(t.id == task_id for t in batch.spec.tasks)
    if not (_TASK_ID.fullmatch(task_id) and known):
        raise NotFound(f"batch {batch.spec.id} has no task {task_id[:200]!r}")
    after = after_seq(request)
    limit = _limit(request)
    lines = await anyio.to_thread.run_sync(_task_lines, batch.spec.output, task_id)
    chosen = lines[after : after + limit]
    parts = [b'{"seq":%d,"event":%s}' % (after + i + 1, line) for i, line in enumerate(chosen)]
    body = b'{"events":[' + b",".join(parts) + b'],"last_seq":%d}' % len(lines)
    return Response(body, media_type="application/json")


ROUTES: list[BaseRoute] = [
    Route("/v1/batches", create_batch, methods=["POST"]),
    Route("/v1/batches", list_batches, methods=["GET"]),
    Route("/v1/batches/{batch_id}", get_batch, methods=["GET"]),
    Route("/v1/batches/{batch_id}/events", batch_events, methods=["GET"]),
    Route("/v1/batches/{batch_id}/retry-failed", retry_failed, methods=["POST"]),
    Route("/v1/batches/{batch_id}/tasks", list_tasks, methods=["GET"]),
    Route("/v1/batches/{batch_id}/tasks/{task_id}/events", task_events, methods=["GET"]),
]
