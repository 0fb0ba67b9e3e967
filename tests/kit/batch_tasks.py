"""The batch e2e tests' tasks: task i writes out.txt with its number and answers "done i"
(tests/e2e/test_batch.py, and test_ray.py, which runs them on Ray)."""

from __future__ import annotations

import json
from pathlib import Path

from gemwire.batch import read_results
from gemwire.testing import FunctionCall, Reply, Scenario, Text


def scenario(n: int, *, write: bool = True) -> Scenario:
    """Task i writes out.txt with its number, then answers "done i" (``when`` keeps the
    concurrent tasks' turns apart). Without ``write`` a task only answers, as often as asked."""
    turns: list[Reply] = []
    for i in range(n):
        when = f"task number {i}."
        if write:
            call = FunctionCall("write_file", {"file_path": "out.txt", "content": f"{i}\n"})
            turns.append(Reply([call], when=when))
        turns.append(Reply([Text(f"done {i}")], when=when, repeat=1 if write else 3))
    return Scenario(turns=[*turns])


def tasks_file(tmp_path: Path, n: int) -> Path:
    template = tmp_path / "template"
    template.mkdir(exist_ok=True)
    (template / "README").write_text("a project\n")
    path = tmp_path / "tasks.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {"id": f"task-{i}", "prompt": f"Do task number {i}.", "template": "template"}
            )
            + "\n"
            for i in range(n)
        )
    )
    return path


def check_outputs(out: Path, n: int, agent: str = "gemini") -> None:
    results = read_results(out)
    assert sorted(r.task_id for r in results) == sorted(f"task-{i}" for i in range(n))
    for r in results:
        i = int(r.task_id.split("-")[1])
        assert (r.ok, r.answer, r.error) == (True, f"done {i}", None)
        # ACP tells a created file from a modified one; stream-json does not.
        change = "written" if agent == "gemini" else "created"
        assert [(f.path, f.change) for f in r.files_changed] == [("out.txt", change)]
        assert (Path(r.workspace) / "out.txt").read_text() == f"{i}\n"
        assert r.workspace == str(out / "workspaces" / r.task_id)
        assert r.agent == agent
        if agent == "gemini":
            assert r.resume == f"gemini --resume {r.session_id}"
        events = (out / "events" / f"{r.task_id}.jsonl").read_text().splitlines()
        assert json.loads(events[0])["type"] == "session_started"
        assert json.loads(events[-1])["type"] == "turn_completed"


def comparable(out: Path) -> list[tuple[object, ...]]:
    return sorted(
        (r.task_id, r.ok, r.answer, r.error, [(f.path, f.change) for f in r.files_changed])
        for r in read_results(out)
    )
