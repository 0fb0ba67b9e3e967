"""A batch through ``gemwire serve`` over real HTTP: the real ``gemini --acp`` (Gemini CLI
0.61.0) against the scripted model, progress read over SSE, then SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from gemwire.batch import read_results
from gemwire.testing import FunctionCall, IsolatedGemini, Reply, Scenario, ScriptedModel, Text

pytestmark = pytest.mark.e2e

GEMWIRE = str(Path(sys.executable).with_name("gemwire"))
TOKEN = "e2e-token-0123456789"
N = 3


def scenario() -> Scenario:
    """Task i writes out.txt with its number, then answers "done i"."""
    turns: list[Reply] = []
    for i in range(N):
        when = f"task number {i}."
        call = FunctionCall("write_file", {"file_path": "out.txt", "content": f"{i}\n"})
        turns += [Reply([call], when=when), Reply([Text(f"done {i}")], when=when)]
    return Scenario(turns=[*turns])


def sse_envelopes(http: httpx.Client, path: str) -> list[dict[str, Any]]:
    """Every ``data`` of an SSE stream that ends by itself, checked against its ``id``."""
    found: list[dict[str, Any]] = []
    ids: list[str] = []
    with http.stream("GET", path, timeout=httpx.Timeout(10, read=180)) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("id: "):
                ids.append(line.removeprefix("id: "))
            elif line.startswith("data: "):
                found.append(json.loads(line.removeprefix("data: ")))
    assert ids == [str(e["seq"]) for e in found]
    return found


def test_a_batch_runs_on_gemini_acp_through_the_server(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "template").mkdir(parents=True)
    (root / "template" / "README").write_text("a project\n")
    (root / "tasks.jsonl").write_text(
        "".join(
            json.dumps(
                {"id": f"task-{i}", "prompt": f"Do task number {i}.", "template": "template"}
            )
            + "\n"
            for i in range(N)
        )
    )
    with ScriptedModel(scenario()) as model:
        env = IsolatedGemini(model.url, root=tmp_path / "gemini")
        argv = [GEMWIRE, "serve", "--port", "0", "--token", TOKEN, "--root", str(root),
                "--state-dir", str(tmp_path / "state")]  # fmt: skip
        with (
            (tmp_path / "server.log").open("wb") as log,
            subprocess.Popen(
                argv, env=env.environ(), stdout=subprocess.PIPE, stderr=log, start_new_session=True
            ) as server,
        ):
            try:
                assert server.stdout is not None
                first = server.stdout.readline().decode()
                assert first.startswith("gemwire serve: http://127.0.0.1:"), first
                url = first.split(" ", 2)[2].split("/?token=")[0]
                headers = {"Authorization": f"Bearer {TOKEN}"}
                with httpx.Client(base_url=url, headers=headers, timeout=30) as http:
                    body = {"tasks": "tasks.jsonl", "output": "out", "agent": "gemini",
                            "concurrency": N, "timeout": 120, "permissions": "edits"}  # fmt: skip
                    created = http.post("/v1/batches", json=body)
                    assert created.status_code == 201, created.text
                    batch_id = created.json()["id"]
                    envelopes = sse_envelopes(http, f"/v1/batches/{batch_id}/events")
                    view = http.get(f"/v1/batches/{batch_id}").json()
                    task_events = http.get(f"/v1/batches/{batch_id}/tasks/task-0/events").json()
                    saved = http.get("/v1/saved-sessions?agent=gemini").json()["sessions"]
                server.send_signal(signal.SIGTERM)
                assert server.wait(timeout=60) == 0
            finally:
                if server.poll() is None:  # a failed test: nothing of it is left running
                    os.killpg(server.pid, signal.SIGKILL)
                    server.wait()
        assert model.problems == []

    out = root / "out"
    assert [e["seq"] for e in envelopes] == list(range(1, len(envelopes) + 1))
    kinds = [e["progress"]["type"] for e in envelopes]
    assert (kinds[0], kinds[-1]) == ("batch_started", "batch_finished")
    assert sorted(kinds[1:-1]) == ["task_finished"] * N + ["task_started"] * N
    assert envelopes[0]["progress"] == {
        "type": "batch_started", "tasks": N, "skipped": 0, "mode": "acp", "concurrency": N,
    }  # fmt: skip
    summary = envelopes[-1]["progress"]["summary"]
    assert (summary["tasks"], summary["ok"], summary["failed"]) == (N, N, 0)
    assert {k: view[k] for k in ("status", "done", "failed", "running", "pending")} == {
        "status": "finished", "done": N, "failed": 0, "running": 0, "pending": 0,
    }  # fmt: skip
    assert (view["failed_by_kind"], view["eta_s"], view["last_seq"]) == ({}, None, len(envelopes))

    results = read_results(out)
    assert sorted(r.task_id for r in results) == [f"task-{i}" for i in range(N)]
    for r in results:
        i = int(r.task_id.split("-")[1])
        assert (r.ok, r.answer, r.error, r.agent) == (True, f"done {i}", None, "acp:gemini-cli")
        assert [(f.path, f.change) for f in r.files_changed] == [("out.txt", "created")]
        assert (out / "workspaces" / r.task_id / "out.txt").read_text() == f"{i}\n"
    lines = (out / "events" / "task-0.jsonl").read_text().splitlines()
    assert task_events == {
        "events": [{"seq": n, "event": json.loads(line)} for n, line in enumerate(lines, 1)],
        "last_seq": len(lines),
    }
    assert (
        task_events["events"][0]["event"]["type"],
        task_events["events"][-1]["event"]["type"],
    ) == (
        "session_started",
        "turn_completed",
    )
    # The agent saved each task's session in the server's home: they list as saved sessions.
    assert sorted(s["id"] for s in saved) == sorted(r.session_id or "" for r in results)
