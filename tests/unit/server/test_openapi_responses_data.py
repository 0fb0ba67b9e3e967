"""Real answers of the saved-session and batch routes checked against docs/openapi.json
(`kit.openapi_check`), as test_openapi_responses.py checks the session routes': each
status one the document lists, each JSON answer valid against its schema (`SavedSessions`,
`SavedSearch`, `SavedEvents`, `SavedMessages`, `UsageReport`, `BatchView`, `Batches`,
`TaskRows`, the envelopes and `ErrorBody`). Every operation of both tags is asked (the test
fails on one it leaves out)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self

import pytest
from kit.materialized import Materialized
from kit.openapi_check import Checked, operations_tagged
from kit.server import make_config, served

from gemwire.batch import Task, runner as batch_runner
from gemwire.events import Event, MessageDelta, TurnError
from gemwire.server import create_app

pytestmark = pytest.mark.anyio

JSON = {"Accept": "application/json"}


async def test_saved_sessions_answer_what_the_document_says(
    materialize: Callable[[str, str], Materialized], tmp_path: Path
) -> None:
    run = materialize("0.61.0", "plain_answer")
    config = make_config(str(run.workspace), str(tmp_path / "state"), sessions_home=str(run.home))
    async with served(create_app(config)) as server:
        api = Checked(server)
        listed = (await api.call("GET", "/v1/saved-sessions?limit=5")).json()
        [session] = listed["sessions"]
        assert (await api.call("GET", "/v1/saved-sessions?since=today&until=7d")).status_code == 400
        found = await api.call("GET", "/v1/saved-sessions/search?text=o&agent=gemini")
        assert [hit["id"] for hit in found.json()["hits"]] == [session["id"]]
        assert (await api.call("GET", "/v1/saved-sessions/search")).status_code == 400
        path = f"/v1/saved-sessions/gemini/{session['id']}"
        assert (await api.call("GET", path)).json()["events"]
        assert (await api.call("GET", f"{path}?format=json")).json()["session"] == session
        for fmt in ("markdown", "html"):
            assert (await api.call("GET", f"{path}?format={fmt}")).status_code == 200
        assert (await api.call("GET", f"{path}?format=pdf")).status_code == 400
        assert (await api.call("GET", "/v1/saved-sessions/gemini/nope")).status_code == 404
        assert (await api.call("GET", "/v1/usage?by=model")).json()["sessions"] == 1
        assert (await api.call("GET", "/v1/usage?by=moon")).status_code == 400
    assert operations_tagged("saved sessions") - api.seen == set()


class _Executor:
    """Each task says its prompt and finishes; ``t2`` fails the first time (kind ``auth``),
    so that ``retry-failed`` has something to run."""

    def __init__(self) -> None:
        self.failed = False

    async def run(self, task: Task, cwd: str, on_event: Callable[[Event], None]) -> Any:
        on_event(MessageDelta(agent="acp:scripted", text=task.prompt))
        if task.id == "t2" and not self.failed:
            self.failed = True
            return _Outcome(ok=False, error=TurnError(kind="auth", message="no key"), answer="")
        return _Outcome(answer=f"did {task.prompt}")

    def agent_of(self, task: Task) -> str:
        return "acp:scripted"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        pass


class _Outcome:
    def __init__(self, *, ok: bool = True, error: TurnError | None = None, answer: str) -> None:
        self.ok, self.error, self.answer = ok, error, answer
        self.files_changed: list[Any] = []
        self.usage = None
        self.session_id = "s"


async def test_batches_answer_what_the_document_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    executor = _Executor()  # one for both runs: t2 fails in the first only
    monkeypatch.setattr(batch_runner, "_executor", lambda options: executor)
    root = (tmp_path / "root").resolve()
    root.mkdir()
    tasks = [{"id": f"t{i}", "prompt": f"p{i}"} for i in (1, 2)]
    (root / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    config = make_config(str(root), str(tmp_path / "state"), agents={"scripted": ("scripted",)})
    async with served(create_app(config)) as server:
        api = Checked(server)
        body = {"tasks": "tasks.jsonl", "output": "out", "agent": "scripted", "concurrency": 1}
        created = await api.call("POST", "/v1/batches", json=body)
        assert created.status_code == 201
        base = f"/v1/batches/{created.json()['id']}"
        async with server.sse(f"{base}/events") as stream:
            await stream.ended.wait()  # the batch is over
        assert (await api.call("GET", base)).json()["failed_by_kind"] == {"auth": 1}
        assert (await api.call("POST", "/v1/batches", json={"open": "out"})).status_code == 200
        assert (
            await api.call("POST", "/v1/batches", json={"tasks": "tasks.jsonl"})
        ).status_code == 400
        assert len((await api.call("GET", f"{base}/events", headers=JSON)).json()["events"]) == 6
        assert (await api.call("GET", f"{base}/events?after=x", headers=JSON)).status_code == 400
        rows = (await api.call("GET", f"{base}/tasks")).json()["tasks"]
        assert [(r["id"], r["status"]) for r in rows] == [("t1", "done"), ("t2", "failed")]
        answer = (await api.call("GET", f"{base}/tasks/t1/events")).json()
        assert [e["event"]["type"] for e in answer["events"]][:1] == ["message_delta"]
        assert (await api.call("GET", f"{base}/tasks/t9/events")).status_code == 404
        assert (await api.call("GET", f"{base}/report")).json()["is_eval"] is False
        assert (await api.call("POST", f"{base}/retry-failed")).status_code == 202
        async with server.sse(f"{base}/events", headers={"Last-Event-ID": "6"}) as stream:
            await stream.ended.wait()  # the retry is over: t2 done
        [listed] = (await api.call("GET", "/v1/batches")).json()["batches"]
        assert (listed["id"], listed["failed"], listed["status"]) == (base[12:], 0, "finished")
        assert (await api.call("GET", "/v1/batches/b_0000000000000000")).status_code == 404
    assert operations_tagged("batches") - api.seen == set()
