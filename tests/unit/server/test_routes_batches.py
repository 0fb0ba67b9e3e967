"""``/v1/batches``: a batch run by the server (a scripted executor in place of the agents, as
tests/unit/batch/test_engine.py does), its progress over SSE, retries, read-only folders,
paths confined to the roots, and a shutdown that leaves the output folder resumable."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import anyio
import pytest
from kit.server import Served, make_config, served
from starlette.applications import Starlette

from gemwire.batch import Task, read_results, runner as batch_runner
from gemwire.batch.output import STOPPED, BatchOutput
from gemwire.events import Event, FileChanged, MessageDelta, TokenUsage, TurnError
from gemwire.server import create_app

pytestmark = pytest.mark.anyio

AGENT = "scripted"


@dataclass
class Outcome:
    ok: bool = True
    error: TurnError | None = None
    answer: str = "done"
    files_changed: list[FileChanged] = field(default_factory=list)
    usage: TokenUsage | None = None
    session_id: str | None = "s"


class Scripted:
    """Each task answers "did <prompt>" once ``go`` is set; tasks in ``failing`` fail with
    kind ``auth`` the first time."""

    def __init__(self, failing: frozenset[str] = frozenset()) -> None:
        self.failing = set(failing)
        self.go = anyio.Event()
        self.go.set()
        self.free: set[str] = set()
        """Tasks that need no ``go``."""
        self.calls: list[tuple[str, str]] = []
        self._called = anyio.Event()

    async def run(self, task: Task, cwd: str, on_event: Callable[[Event], None]) -> Outcome:
        self.calls.append((task.id, cwd))
        self._called.set()
        self._called = anyio.Event()
        on_event(MessageDelta(agent="acp:scripted", text=task.prompt))
        if task.id not in self.free:
            await self.go.wait()
        if task.id in self.failing:
            self.failing.discard(task.id)
            return Outcome(ok=False, error=TurnError(kind="auth", message="no key"), answer="")
        return Outcome(answer=f"did {task.prompt}")

    async def until_running(self, count: int) -> None:
        """Once ``count`` tasks are in the executor (their events file open)."""
        while len(self.calls) < count:
            await self._called.wait()

    def agent_of(self, task: Task) -> str:
        return "acp:scripted"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        pass


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> Scripted:
    executor = Scripted(frozenset({"t2"}))
    monkeypatch.setattr(batch_runner, "_executor", lambda options: executor)
    return executor


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "repo").mkdir(parents=True)
    (root / "tasks.jsonl").write_text(
        "".join(
            json.dumps({"id": f"t{i}", "prompt": f"p{i}", "workspace": "repo"}) + "\n"
            for i in (1, 2, 3)
        )
    )
    return root.resolve()


def app_for(root: Path) -> Starlette:
    config = make_config(str(root), str(root.parent / "state"), agents={AGENT: ("scripted",)})
    return create_app(config)


@pytest.fixture
async def server(root: Path) -> AsyncIterator[Served]:
    async with served(app_for(root)) as s:
        yield s


def error(kind: str, message: str) -> dict[str, object]:
    return {"error": {"kind": kind, "message": message}}


async def start(server: Served, **body: Any) -> dict[str, Any]:
    body = {"tasks": "tasks.jsonl", "output": "out", "agent": AGENT, "concurrency": 1, **body}
    response = await server.request("POST", "/v1/batches", json=body)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def progress(server: Served, batch_id: str, after: int = 0) -> list[dict[str, Any]]:
    """Every envelope of the batch's SSE stream after ``after``, once the run is over."""
    async with server.sse(f"/v1/batches/{batch_id}/events?after={after}") as stream:
        with anyio.fail_after(10):
            await stream.ended.wait()
    assert stream.status == 200
    assert stream.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert [m["id"] for m in stream.messages()] == [str(e["seq"]) for e in stream.envelopes()]
    return stream.envelopes()


async def seen(server: Served, batch_id: str, count: int) -> None:
    """Once the server has taken in ``count`` progress envelopes of the batch."""
    async with server.sse(f"/v1/batches/{batch_id}/events") as stream:
        with anyio.fail_after(10):
            await stream.wait_for(count)


def kinds(envelopes: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    found = []
    for envelope in envelopes:
        p = envelope["progress"]
        task = p.get("task_id") or p.get("result", {}).get("task_id") or ""
        found.append((envelope["seq"], p["type"], task))
    return found


def rows(response: Any) -> list[tuple[str, str, int | None, str | None]]:
    assert response.status_code == 200, response.text
    return [
        (t["id"], t["status"], t["attempts"], t["error_kind"]) for t in response.json()["tasks"]
    ]


def messages(response: Any) -> dict[str, str | None]:
    return {t["id"]: t["error_message"] for t in response.json()["tasks"]}


async def test_a_batch_runs_and_its_progress_streams(
    server: Served, scripted: Scripted, root: Path
) -> None:
    created = await start(server)
    batch_id = created["id"]
    assert (batch_id[:2], len(batch_id)) == ("b_", 18)
    assert (created["output"], created["agent"], created["read_only"], created["tasks"]) == (
        str(root / "out"),
        AGENT,
        False,
        3,
    )
    envelopes = await progress(server, batch_id)
    assert kinds(envelopes) == [
        (1, "batch_started", ""),
        (2, "task_started", "t1"),
        (3, "task_finished", "t1"),
        (4, "task_started", "t2"),
        (5, "task_finished", "t2"),
        (6, "task_started", "t3"),
        (7, "task_finished", "t3"),
        (8, "batch_finished", ""),
    ]
    assert envelopes[0]["progress"] == {
        "type": "batch_started", "tasks": 3, "skipped": 0, "mode": "acp", "concurrency": 1,
    }  # fmt: skip
    view = (await server.request("GET", f"/v1/batches/{batch_id}")).json()
    assert {k: view[k] for k in ("status", "done", "failed", "running", "pending")} == {
        "status": "finished", "done": 3, "failed": 1, "running": 0, "pending": 0,
    }  # fmt: skip
    assert (view["failed_by_kind"], view["eta_s"], view["last_seq"], view["error"]) == (
        {"auth": 1},
        None,
        8,
        None,
    )
    assert scripted.calls == [(f"t{i}", str(root / "repo")) for i in (1, 2, 3)]
    assert [r.task_id for r in read_results(root / "out")] == ["t1", "t2", "t3"]
    listed = (await server.request("GET", "/v1/batches")).json()
    assert listed == {"batches": [view]}
    # Resumed from a sequence number: the rest, exactly once (also by Last-Event-ID).
    assert [e["seq"] for e in await progress(server, batch_id, after=5)] == [6, 7, 8]
    async with server.sse(
        f"/v1/batches/{batch_id}/events", headers={"Last-Event-ID": "7"}
    ) as stream:
        await stream.ended.wait()
    assert [e["seq"] for e in stream.envelopes()] == [8]
    as_json = await server.request(
        "GET", f"/v1/batches/{batch_id}/events?after=6", headers={"Accept": "application/json"}
    )
    assert as_json.json() == {"events": envelopes[6:], "last_seq": 8}
    for query, message in (
        ("after=-1", "after must be a sequence number, not '-1'"),
        ("after=" + "9" * 5000, "after must be a sequence number, not '" + "9" * 40 + "'"),
        ("limit=0", "limit must be 1 to 1000, not '0'"),
        ("limit=" + "9" * 5000, "limit must be 1 to 1000, not '" + "9" * 40 + "'"),
    ):
        bad = await server.request(
            "GET", f"/v1/batches/{batch_id}/events?{query}", headers={"Accept": "application/json"}
        )
        assert (bad.status_code, bad.json()) == (400, error("bad_request", message)), query
        bad = await server.request("GET", f"/v1/batches/{batch_id}/tasks/t1/events?{query}")
        assert (bad.status_code, bad.json()) == (400, error("bad_request", message)), query


async def test_a_running_batch_counts_running_and_pending(
    server: Served, scripted: Scripted
) -> None:
    scripted.go = anyio.Event()
    created = await start(server, concurrency=2)
    await seen(server, created["id"], 3)  # batch_started, then both task_started
    view = (await server.request("GET", f"/v1/batches/{created['id']}")).json()
    assert {k: view[k] for k in ("status", "done", "failed", "running", "pending", "eta_s")} == {
        "status": "running", "done": 0, "failed": 0, "running": 2, "pending": 1, "eta_s": None,
    }  # fmt: skip
    tasks = await server.request("GET", f"/v1/batches/{created['id']}/tasks")
    assert rows(tasks) == [
        ("t1", "running", None, None),
        ("t2", "running", None, None),
        ("t3", "pending", None, None),
    ]
    again = await server.request(
        "POST", "/v1/batches", json={"tasks": "tasks.jsonl", "output": "out", "agent": AGENT}
    )
    assert (again.status_code, again.json()) == (
        409,
        error("conflict", f"batch {created['id']} is writing to {view['output']}"),
    )
    retry = await server.request("POST", f"/v1/batches/{created['id']}/retry-failed")
    assert (retry.status_code, retry.json()) == (
        409,
        error("conflict", f"batch {created['id']} is running"),
    )
    scripted.go.set()
    await progress(server, created["id"])
    view = (await server.request("GET", f"/v1/batches/{created['id']}")).json()
    assert (view["status"], view["done"], view["running"], view["pending"]) == (
        "finished",
        3,
        0,
        0,
    )


async def test_the_eta_follows_this_run_s_pace(server: Served, scripted: Scripted) -> None:
    scripted.go = anyio.Event()
    scripted.free = {"t1"}
    created = await start(server)
    await seen(server, created["id"], 4)  # t1 finished, t2 started (and waits)
    view = (await server.request("GET", f"/v1/batches/{created['id']}")).json()
    assert (view["done"], view["running"], view["pending"]) == (1, 1, 1)
    assert isinstance(view["eta_s"], float)
    assert view["eta_s"] >= 0
    scripted.go.set()
    await progress(server, created["id"])
    view = (await server.request("GET", f"/v1/batches/{created['id']}")).json()
    assert (view["status"], view["eta_s"]) == ("finished", None)


async def test_retry_failed_runs_only_the_failed_task(server: Served, scripted: Scripted) -> None:
    created = await start(server)
    await progress(server, created["id"])
    scripted.calls.clear()
    retry = await server.request("POST", f"/v1/batches/{created['id']}/retry-failed")
    assert retry.status_code == 202
    envelopes = await progress(server, created["id"], after=8)
    assert kinds(envelopes) == [
        (9, "batch_started", ""),
        (10, "task_started", "t2"),
        (11, "task_finished", "t2"),
        (12, "batch_finished", ""),
    ]
    assert [call[0] for call in scripted.calls] == ["t2"]
    view = (await server.request("GET", f"/v1/batches/{created['id']}")).json()
    assert (view["status"], view["done"], view["failed"], view["failed_by_kind"]) == (
        "finished",
        3,
        0,
        {},
    )


async def test_a_task_s_events_are_envelopes(
    server: Served, scripted: Scripted, root: Path
) -> None:
    created = await start(server)
    await progress(server, created["id"])
    response = await server.request("GET", f"/v1/batches/{created['id']}/tasks/t1/events")
    assert response.json() == {
        "events": [
            {
                "seq": 1,
                "event": {
                    "type": "message_delta", "agent": "acp:scripted", "session_id": None,
                    "text": "p1",
                },
            }
        ],
        "last_seq": 1,
    }  # fmt: skip
    events = root / "out" / "events"
    (events / "t1.jsonl").rename(events / "t1.real")
    (events / "t1.jsonl").symlink_to("t1.real")  # planted: a link may lead anywhere
    os.mkfifo(events / "t2.jsonl.part")
    (events / "t2.jsonl").unlink()
    for task_id, message in (
        ("t1", "the events of task 't1' cannot be read: Too many levels of symbolic links"),
        (
            "t2",
            (
                "the events of task 't2' are not a file gemwire wrote (a regular file of at "
                "most 268435456 bytes)"
            ),
        ),
    ):
        planted = await server.request("GET", f"/v1/batches/{created['id']}/tasks/{task_id}/events")
        assert (planted.status_code, planted.json()) == (422, error("unreadable", message))
    for task_id in ("t9", "%2e%2e", "..%2F..%2Fresults", "t1%00"):
        missing = await server.request("GET", f"/v1/batches/{created['id']}/tasks/{task_id}/events")
        assert missing.status_code == 404, task_id
        assert missing.json()["error"]["kind"] == "not_found"


async def test_an_output_folder_opens_read_only(
    server: Served, scripted: Scripted, root: Path
) -> None:
    created = await start(server)
    await progress(server, created["id"])
    same = await server.request("POST", "/v1/batches", json={"open": "out"})
    assert (same.status_code, same.json()["id"]) == (200, created["id"])
    shutil.copytree(root / "out", root / "copy")
    opened = await server.request("POST", "/v1/batches", json={"open": "copy"})
    assert opened.status_code == 201
    view = opened.json()
    assert {k: view[k] for k in ("status", "read_only", "tasks", "done", "failed", "agent")} == {
        "status": "finished", "read_only": True, "tasks": 3, "done": 3, "failed": 1, "agent": None,
    }  # fmt: skip
    events = await server.request("GET", f"/v1/batches/{view['id']}/tasks/t3/events")
    assert [e["event"]["text"] for e in events.json()["events"]] == ["p3"]
    retry = await server.request("POST", f"/v1/batches/{view['id']}/retry-failed")
    assert (retry.status_code, retry.json()) == (
        409,
        error("conflict", f"batch {view['id']} was opened read-only: its tasks are not known"),
    )
    with (root / "copy" / "results.jsonl").open("ab") as results:
        results.write(b"not a result\n")  # damaged since it was opened
    damaged = (await server.request("GET", f"/v1/batches/{view['id']}")).json()
    assert (damaged["status"], damaged["error"]["kind"]) == ("failed", "BatchOutputError")
    assert damaged["error"]["message"].startswith(f"{root / 'copy' / 'results.jsonl'} line 4 ")
    listed = (await server.request("GET", "/v1/batches")).json()["batches"]
    assert [b["status"] for b in listed] == ["finished", "failed"]
    (root / "empty").mkdir()
    refused = await server.request("POST", "/v1/batches", json={"open": "empty"})
    assert (refused.status_code, refused.json()) == (
        400,
        error("bad_request", f"{root / 'empty'} is not a batch's output folder (no results.jsonl)"),
    )


async def test_a_batch_lists_its_tasks_and_an_opened_folder_too(
    server: Served, scripted: Scripted, root: Path
) -> None:
    created = await start(server)
    await progress(server, created["id"])
    ran = await server.request("GET", f"/v1/batches/{created['id']}/tasks")
    assert rows(ran) == [
        ("t1", "done", 1, None),
        ("t2", "failed", 1, "auth"),
        ("t3", "done", 1, None),
    ]
    assert all(isinstance(t["duration_s"], float) for t in ran.json()["tasks"])
    assert messages(ran) == {"t1": None, "t2": "no key", "t3": None}
    shutil.copytree(root / "out", root / "copy")
    events = root / "copy" / "events"
    (events / "t4.jsonl.part").write_text("")  # a task the run that had it left unfinished
    (events / "notes.txt").write_text("")
    (events / "..hidden.jsonl").write_text("")  # no task has such an id
    opened = (await server.request("POST", "/v1/batches", json={"open": "copy"})).json()
    listed = await server.request("GET", f"/v1/batches/{opened['id']}/tasks")
    assert rows(listed) == [
        ("t1", "done", 1, None),
        ("t2", "failed", 1, "auth"),
        ("t3", "done", 1, None),
        ("t4", "unfinished", None, None),
    ]
    assert messages(listed) == {"t1": None, "t2": "no key", "t3": None, "t4": None}
    unknown = await server.request("GET", "/v1/batches/b_0000000000000000/tasks")
    assert unknown.status_code == 404


async def test_paths_outside_the_roots_and_bad_requests_are_refused(
    server: Served, scripted: Scripted, root: Path
) -> None:
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "tasks.jsonl").write_text('{"id": "x", "prompt": "p"}\n')
    (root / "escape.jsonl").write_text('{"id": "x", "prompt": "p", "workspace": "../outside"}\n')
    (root / "link").symlink_to(outside)
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({"tasks": "../outside/tasks.jsonl"}, 403, "forbidden"),
        ({"tasks": "link/tasks.jsonl"}, 403, "forbidden"),
        ({"output": "../outside/out"}, 403, "forbidden"),
        ({"output": "link/out"}, 403, "forbidden"),
        ({"output": str(outside)}, 403, "forbidden"),
        ({"tasks": "escape.jsonl"}, 403, "forbidden"),
        ({"tasks": [{"prompt": "p", "workspace": str(outside)}]}, 403, "forbidden"),
        ({"tasks": [{"prompt": "p", "template": "link"}]}, 403, "forbidden"),
        ({"tasks": "missing.jsonl"}, 400, "bad_request"),
        ({"tasks": "tasks\u0000.jsonl"}, 400, "bad_request"),
        ({"output": "out\u0000"}, 400, "bad_request"),
        ({"tasks": []}, 400, "bad_request"),
        ({"tasks": [{"prompt": "p", "id": "../x"}]}, 400, "bad_request"),
        ({"tasks": [{"prompt": "p", "extra": 1}]}, 400, "bad_request"),
        ({"concurrency": 0}, 400, "bad_request"),
        ({"timeout": -1}, 400, "bad_request"),
        ({"open": "out"}, 400, "bad_request"),
        ({"agent": "nobody"}, 404, "not_found"),
    ]
    for changes, status, kind in cases:
        body = {"tasks": "tasks.jsonl", "output": "out", "agent": AGENT, **changes}
        response = await server.request("POST", "/v1/batches", json=body)
        assert (response.status_code, response.json()["error"]["kind"]) == (status, kind), changes
    assert scripted.calls == []
    assert not (outside / "out").exists()
    assert (await server.request("GET", "/v1/batches")).json() == {"batches": []}
    for path in ("/v1/batches/b_0000000000000000", "/v1/batches/nope/events"):
        missing = await server.request("GET", path)
        assert missing.status_code == 404


async def test_inline_tasks_run_in_the_first_root(
    server: Served, scripted: Scripted, root: Path
) -> None:
    created = await start(server, tasks=[{"prompt": "a"}, {"prompt": "b", "workspace": "repo"}])
    await progress(server, created["id"])
    assert scripted.calls == [("00001", str(root)), ("00002", str(root / "repo"))]


async def test_shutdown_stops_a_batch_that_a_restart_resumes(
    scripted: Scripted, root: Path
) -> None:
    async with served(app_for(root)) as server:
        scripted.go = anyio.Event()
        created = await start(server, concurrency=2)
        with anyio.fail_after(10):
            await scripted.until_running(2)
        async with server.sse(f"/v1/batches/{created['id']}/events") as stream:
            await stream.wait_for(3)
            # Shutdown begins (uvicorn's SIGTERM): the batch stops and its stream ends.
            server.app.state.gemwire.shutting_down.set()
            with anyio.fail_after(10):
                await stream.ended.wait()
        view = (await server.request("GET", f"/v1/batches/{created['id']}")).json()
        assert (view["status"], view["running"], view["pending"]) == ("stopped", 0, 3)
    out = root / "out"
    assert read_results(out) == []
    for task_id in ("t1", "t2"):
        lines = (out / "events" / f"{task_id}.jsonl.part").read_text().splitlines()
        assert json.loads(lines[-1])["message"] == STOPPED
    scripted.go.set()
    async with served(app_for(root)) as server:
        view = (await server.request("GET", f"/v1/batches/{created['id']}")).json()
        assert (view["status"], view["done"], view["running"], view["pending"]) == (
            "stopped",
            0,
            0,
            3,
        )
        assert view["last_seq"] == 3
        retry = await server.request("POST", f"/v1/batches/{created['id']}/retry-failed")
        assert retry.status_code == 202
        envelopes = await progress(server, created["id"], after=3)
        assert envelopes[0] == {
            "seq": 4,
            "progress": {
                "type": "batch_started", "tasks": 3, "skipped": 0, "mode": "acp",
                "concurrency": 2,
            },
        }  # fmt: skip
        view = (await server.request("GET", f"/v1/batches/{created['id']}")).json()
        assert (view["status"], view["done"], view["failed"]) == ("finished", 3, 1)
    assert sorted(r.task_id for r in read_results(out)) == ["t1", "t2", "t3"]


async def test_an_output_folder_another_batch_writes_to_is_a_conflict(
    server: Served, scripted: Scripted, root: Path
) -> None:
    folder = BatchOutput(root / "out")  # `gemwire batch` writing there
    try:
        response = await server.request(
            "POST", "/v1/batches", json={"tasks": "tasks.jsonl", "output": "out", "agent": AGENT}
        )
    finally:
        folder.close()
    assert (response.status_code, response.json()) == (
        409,
        error("conflict", f"another batch is writing to {root / 'out'}"),
    )
    assert (await server.request("GET", "/v1/batches")).json() == {"batches": []}
    assert scripted.calls == []


async def test_retry_failed_confines_the_paths_again(scripted: Scripted, root: Path) -> None:
    """A task's workspace replaced by a symlink out of the roots, or a ``batch.json`` edited
    to name a folder outside them: the retry is refused, no task runs."""
    outside = root.parent / "outside"
    outside.mkdir()
    async with served(app_for(root)) as server:
        created = await start(server)
        await progress(server, created["id"])
        shutil.rmtree(root / "repo")
        (root / "repo").symlink_to(outside)
        scripted.calls.clear()
        moved = await server.request("POST", f"/v1/batches/{created['id']}/retry-failed")
    assert (moved.status_code, moved.json()) == (
        403,
        error("forbidden", f"{str(root / 'repo')!r} is outside the server's roots ({root})"),
    )
    (root / "repo").unlink()
    (root / "repo").mkdir()
    spec_path = root.parent / "state" / "batches" / created["id"] / "batch.json"
    spec = json.loads(spec_path.read_text())
    spec["tasks"][1]["workspace"] = str(outside)
    spec_path.write_text(json.dumps(spec))
    async with served(app_for(root)) as server:
        edited = await server.request("POST", f"/v1/batches/{created['id']}/retry-failed")
        assert edited.status_code == 403
        assert edited.json()["error"]["kind"] == "forbidden"
        spec["tasks"][1]["workspace"] = str(root / "repo")
        spec["output"] = str(outside)
        spec_path.write_text(json.dumps(spec))
    async with served(app_for(root)) as server:
        output = await server.request("POST", f"/v1/batches/{created['id']}/retry-failed")
        assert output.status_code == 403
    assert scripted.calls == []


def unblock(fifo: Path) -> None:
    """A writer for ``fifo``, so that a reader stuck in ``open`` (the old code) goes on."""
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
async def test_a_tasks_file_that_is_not_a_regular_file_is_refused_at_once(
    server: Served, scripted: Scripted, root: Path
) -> None:
    os.mkfifo(root / "tasks.fifo")
    with (root / "huge.jsonl").open("wb") as huge:
        huge.truncate(256 * 1024 * 1024 + 1)  # sparse: nothing is written
    try:
        answers = []
        with anyio.fail_after(10):
            for name in ("tasks.fifo", "huge.jsonl"):
                body = {"tasks": name, "output": "out", "agent": AGENT}
                answers.append(await server.request("POST", "/v1/batches", json=body))
    finally:
        unblock(root / "tasks.fifo")
    assert [(a.status_code, a.json()) for a in answers] == [
        (
            400,
            error("bad_request", f"cannot read {root / 'tasks.fifo'}: not a regular file (a FIFO)"),
        ),
        (
            400,
            error(
                "bad_request",
                f"cannot read {root / 'huge.jsonl'}: 268,435,457 bytes, over the "
                "268,435,456-byte limit",
            ),
        ),
    ]
    assert scripted.calls == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
async def test_an_opened_folder_whose_results_became_a_fifo_is_listed_failed(
    server: Served, scripted: Scripted, root: Path
) -> None:
    created = await start(server)
    await progress(server, created["id"])
    shutil.copytree(root / "out", root / "copy")
    opened = (await server.request("POST", "/v1/batches", json={"open": "copy"})).json()
    results = root / "copy" / "results.jsonl"
    results.unlink()
    os.mkfifo(results)
    try:
        with anyio.fail_after(10):
            view = (await server.request("GET", f"/v1/batches/{opened['id']}")).json()
    finally:
        unblock(results)
    assert (view["status"], view["error"]) == (
        "failed",
        {
            "kind": "BatchOutputError",
            "message": f"cannot read {results}: not a regular file (a FIFO)",
        },
    )


async def test_no_batch_starts_once_shutdown_began(scripted: Scripted, root: Path) -> None:
    async with served(app_for(root)) as server:
        created = await start(server)
        await progress(server, created["id"])
        server.app.state.gemwire.shutting_down.set()  # uvicorn's SIGTERM
        body = {"tasks": "tasks.jsonl", "output": "out2", "agent": AGENT}
        new = await server.request("POST", "/v1/batches", json=body)
        retry = await server.request("POST", f"/v1/batches/{created['id']}/retry-failed")
    shutting_down = error("limit", "the server is shutting down")
    assert [(r.status_code, r.json()) for r in (new, retry)] == [(503, shutting_down)] * 2
    assert not (root / "out2").exists()


async def test_a_retry_right_after_the_end_waits_for_the_run_to_let_go_of_its_folder(
    server: Served, scripted: Scripted, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The agents of a run stop after its batch_finished is logged (seconds, for real
    # agents): a retry then was a false 409 ("another batch is writing to ...").
    letting_go = anyio.Event()

    async def slow_exit(*exc_info: object) -> None:
        await letting_go.wait()

    monkeypatch.setattr(Scripted, "__aexit__", lambda self, *exc: slow_exit())
    created = await start(server)
    await seen(server, created["id"], 8)  # batch_finished
    statuses: list[int] = []

    async def retry() -> None:
        path = f"/v1/batches/{created['id']}/retry-failed"
        statuses.append((await server.request("POST", path)).status_code)

    async with anyio.create_task_group() as tg:
        tg.start_soon(retry)
        await anyio.wait_all_tasks_blocked()
        assert statuses == []  # it waits for the run to end
        view = (await server.request("GET", f"/v1/batches/{created['id']}")).json()
        assert view["status"] == "running"
        letting_go.set()
    assert statuses == [202]
