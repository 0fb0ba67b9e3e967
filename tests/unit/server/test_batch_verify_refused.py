"""A client cannot have the server run a task's ``verify`` (a command past the agent's
permissions) or copy ``verify_files`` from outside the roots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kit.server import make_config, served

from gemwire.server import create_app

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "task",
    [
        {"prompt": "p", "verify": "touch pwned"},
        {"prompt": "p", "verify": ["touch", "pwned"]},
        {"prompt": "p", "template": "repo", "verify": "true", "verify_files": "/etc"},
    ],
)
async def test_graded_tasks_are_refused(tmp_path: Path, task: dict[str, Any]) -> None:
    root = tmp_path / "root"
    (root / "repo").mkdir(parents=True)
    (root / "tasks.jsonl").write_text(json.dumps(task) + "\n")
    config = make_config(str(root), str(tmp_path / "state"), agents={"scripted": ("scripted",)})
    async with served(create_app(config)) as server:
        for tasks in ([task], "tasks.jsonl"):
            body = {"tasks": tasks, "output": "out", "agent": "scripted"}
            response = await server.request("POST", "/v1/batches", json=body)
            assert (response.status_code, response.json()) == (
                400,
                {
                    "error": {
                        "kind": "bad_request",
                        "message": "a task's verify and verify_files are not offered by the server",
                    }
                },
            )
    assert not list(root.rglob("pwned"))
    assert not (root / "out").exists()
