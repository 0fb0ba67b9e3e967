"""gemwire eval --sandbox with a real ACP agent, Qwen Code 0.24.4: started in the attempt's
sandbox (a process an attempt), it reaches its scripted model through the carried port,
fixes the example's ``add`` with its own tools (the client offers none), and is graded; and
beside Gemini CLI through the example's first tasks, as docs/eval.md runs them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gemwire.batch import read_results
from gemwire.testing import (
    FunctionCall,
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    load_scenario,
    pinned_gemini,
)
from gemwire.testing.agents import IsolatedQwen

pytestmark = pytest.mark.e2e

GEMWIRE = str(Path(sys.executable).with_name("gemwire"))
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "eval"


def test_qwen_in_the_sandbox_fixes_add_and_is_graded(bubblewrap: None, tmp_path: Path) -> None:
    add = json.loads((EXAMPLE / "tasks.jsonl").read_text().splitlines()[0])
    add.update(
        template=str(EXAMPLE / add["template"]),
        verify_files=str(EXAMPLE / add["verify_files"]),
        permissions="edits",  # Qwen Code asks before an edit; the preset allows it
    )
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(add) + "\n")
    out = tmp_path / "out"
    calc = str(out / "workspaces" / "add.qwen.1" / "calc.py")
    script = Scenario(
        turns=[
            Reply([Text("Reading calc.py."), FunctionCall("read_file", {"file_path": calc})]),
            Reply(
                [
                    FunctionCall(
                        "edit",
                        {"file_path": calc, "old_string": "a - b", "new_string": "a + b"},
                    )
                ]
            ),
            Reply([Text("Fixed.")]),
        ]
    )
    with ScriptedModel(script) as model:
        qwen = IsolatedQwen(model, root=tmp_path / "qwen")
        argv = [GEMWIRE, "eval", str(tasks), "-o", str(out), "--agents", "qwen", "--sandbox"]
        environ = {**qwen.environ(), "PATH": os.environ["PATH"]}
        ran = subprocess.run(
            argv, env=environ, capture_output=True, text=True, timeout=300, check=False
        )
        assert ran.returncode == 0, ran.stderr
        assert model.problems == []
    [result] = read_results(out)
    assert (result.task_id, result.ok, result.error) == ("add.qwen.1", True, None)
    assert result.grade is not None
    assert (result.grade.status, result.grade.reward) == ("passed", 1.0), result.grade
    assert Path(calc).read_text() == "def add(a, b):\n    return a + b\n"
    assert result.tool_calls == 2
    # Its sessions were kept in the attempt's private home, gone with it.
    assert not list((qwen.home / ".qwen").glob("projects/*/chats/*"))


def test_the_example_compares_gemini_and_qwen_sandboxed(bubblewrap: None, tmp_path: Path) -> None:
    # Two tasks, -k 1: each agent's first answers of add and largest (model.json): gemini
    # fixes add and misses largest, qwen fixes both, each with its own tool.
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
        qwen = IsolatedQwen(model, root=tmp_path / "qwen")  # as gemwire.testing serve sets it
        shutil.copytree(qwen.home / ".qwen", gemini.home / ".qwen")
        argv = [
            GEMWIRE, "eval", str(path), "-o", str(out), "--agents", "gemini,qwen", "-k", "1",
            "-j", "1", "--sandbox", "--executable", str(pinned_gemini()),
        ]  # fmt: skip
        environ = {**gemini.environ(qwen.agent_environ()), "PATH": os.environ["PATH"]}
        ran = subprocess.run(
            argv, env=environ, capture_output=True, text=True, timeout=300, check=False
        )
        assert ran.returncode == 0, ran.stderr
        assert model.problems == []
    graded = {
        r.task_id: (r.ok, r.grade.status, r.tool_calls)
        for r in read_results(out)
        if r.grade is not None
    }
    assert graded == {
        "add.gemini.1": (True, "passed", 1),
        "add.qwen.1": (True, "passed", 1),
        "largest.gemini.1": (True, "failed", 0),
        "largest.qwen.1": (True, "passed", 1),
    }
    report = subprocess.run(
        [GEMWIRE, "eval", "report", str(out), "--json"], capture_output=True, text=True, check=True
    )
    passes = {name: a["pass_at"] for name, a in json.loads(report.stdout)["agents"].items()}
    assert passes == {"gemini": {"1": 0.5}, "qwen": {"1": 1.0}}
