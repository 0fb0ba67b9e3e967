"""Records tests/fixtures/eval/web/: ``gemwire eval`` of examples/eval's first two tasks by
Gemini CLI 0.61.0 and Qwen Code on the scripted model, ``-k 2``, as the server's eval report
and the page's Batches view are tested on (tests/unit/server/test_routes_eval.py,
tests/integration/test_web_eval.py). Run with ``GEMWIRE_RECORD=1``; ``eval.json``, ``results.jsonl`` and
``events/`` are kept, machine paths replaced (the eval's folder by ``{root}``), and the
events without their ``session_updated`` (Qwen Code's list of commands is half a megabyte
an attempt, and the page draws none), as in tests/fixtures/acp/."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gemwire.batch import read_results
from gemwire.testing import IsolatedGemini, ScriptedModel, load_scenario, pinned_gemini
from gemwire.testing.agents import IsolatedQwen
from gemwire.testing.recorder import MachinePaths

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(os.environ.get("GEMWIRE_RECORD") != "1", reason="records a fixture"),
]

GEMWIRE = str(Path(sys.executable).with_name("gemwire"))
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "eval"
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "eval" / "web"


def test_record_the_web_pages_eval(tmp_path: Path) -> None:
    lines = (EXAMPLE / "tasks.jsonl").read_text().splitlines()[:2]
    tasks = [json.loads(line) for line in lines]
    for task in tasks:
        task.update(
            template=str(EXAMPLE / task["template"]),
            verify_files=str(EXAMPLE / task["verify_files"]),
        )
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(task) + "\n" for task in tasks))
    out = tmp_path / "out"
    with ScriptedModel(load_scenario((EXAMPLE / "model.json").read_text())) as model:
        gemini = IsolatedGemini(model.url, root=tmp_path)
        qwen = IsolatedQwen(model, root=tmp_path / "qwen")
        shutil.copytree(qwen.home / ".qwen", gemini.home / ".qwen")
        argv = [
            GEMWIRE, "eval", str(path), "-o", str(out), "--agents", "gemini,qwen", "-k", "2",
            "-j", "1", "--executable", str(pinned_gemini()),
        ]  # fmt: skip
        environ = {**gemini.environ(qwen.agent_environ()), "PATH": os.environ["PATH"]}
        ran = subprocess.run(
            argv, env=environ, capture_output=True, text=True, timeout=600, check=False
        )
        assert ran.returncode == 0, ran.stderr
        assert model.problems == []
    graded = {r.task_id: r.grade.status for r in read_results(out) if r.grade is not None}
    # model.json: add fix/fix by both; largest miss/fix by gemini, fix/fix by qwen
    assert graded == {
        "add.gemini.1": "passed", "add.qwen.1": "passed", "largest.gemini.1": "failed",
        "largest.qwen.1": "passed", "add.gemini.2": "passed", "add.qwen.2": "passed",
        "largest.gemini.2": "passed", "largest.qwen.2": "passed",
    }  # fmt: skip
    machine = MachinePaths()

    def scrub(data: bytes) -> bytes:
        text = data.decode()
        return machine.scrub(text, lambda name: f"{{{name}}}", [(str(tmp_path), "{root}")]).encode()

    shutil.rmtree(FIXTURE, ignore_errors=True)
    (FIXTURE / "events").mkdir(parents=True)
    shutil.copy(out / "eval.json", FIXTURE / "eval.json")
    (FIXTURE / "results.jsonl").write_bytes(scrub((out / "results.jsonl").read_bytes()))
    for log in sorted((out / "events").glob("*.jsonl")):
        logged = log.read_bytes().splitlines(keepends=True)
        kept = [line for line in logged if not line.startswith(b'{"type":"session_updated"')]
        (FIXTURE / "events" / log.name).write_bytes(scrub(b"".join(kept)))
