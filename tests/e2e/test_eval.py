"""gemwire eval through examples/eval with the real Gemini CLI 0.61.0 and its scripted model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gemwire.batch import read_results
from gemwire.testing import IsolatedGemini, ScriptedModel, load_scenario, pinned_gemini

pytestmark = pytest.mark.e2e

GEMWIRE = str(Path(sys.executable).with_name("gemwire"))
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "eval"


def example_tasks(tmp_path: Path, count: int) -> Path:
    """The example's first ``count`` tasks, in a tasks file of their own (paths absolute)."""
    lines = (EXAMPLE / "tasks.jsonl").read_text().splitlines()[:count]
    tasks = [json.loads(line) for line in lines]
    for task in tasks:
        task.update(template=str(EXAMPLE / task["template"]))
        task.update(verify_files=str(EXAMPLE / task["verify_files"]))
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(task) + "\n" for task in tasks))
    return path


def test_the_example_is_graded_attempt_by_attempt(tmp_path: Path) -> None:
    # Three tasks, -k 1: three Gemini CLI starts. The model's first attempts of them are
    # add's right fix, none for largest and shout's right fix (model.json says all).
    out = tmp_path / "out"
    with ScriptedModel(load_scenario((EXAMPLE / "model.json").read_text())) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        argv = [
            GEMWIRE, "eval", str(example_tasks(tmp_path, 3)), "-o", str(out), "--agents", "gemini",
            "-k", "1", "-j", "1", "--executable", str(pinned_gemini()), "--json",
        ]  # fmt: skip
        environ = {**env.environ(), "PATH": os.environ["PATH"]}
        ran = subprocess.run(
            argv, env=environ, capture_output=True, text=True, timeout=300, check=False
        )
        assert ran.returncode == 0, ran.stderr
        assert model.problems == []
    results = {r.task_id: r for r in read_results(out)}
    assert list(results) == ["add.gemini.1", "largest.gemini.1", "shout.gemini.1"]
    graded = {
        i: (r.ok, r.grade.status, r.grade.reward, r.grade.exit_code, r.tool_calls)
        for i, r in results.items()
        if r.grade is not None
    }
    assert graded == {
        "add.gemini.1": (True, "passed", 1.0, 0, 1),
        "largest.gemini.1": (True, "failed", 0.0, 1, 0),
        "shout.gemini.1": (True, "passed", 1.0, 0, 1),
    }
    assert results["largest.gemini.1"].grade.output.endswith("FAILED (failures=1)\n")  # type: ignore[union-attr]
    for r in results.values():
        assert r.workspace == str(out / "workspaces" / r.task_id)
        assert (Path(r.workspace) / "test_hidden.py").exists()  # copied in after the turn
    report = subprocess.run(
        [GEMWIRE, "eval", "report", str(out), "--json"], capture_output=True, text=True, check=True
    )
    agents = json.loads(report.stdout)["agents"]
    assert list(agents) == ["gemini"]
    gemini = agents["gemini"]
    assert gemini["pass_at"] == {"1": pytest.approx(2 / 3)}
    assert (gemini["attempts"], gemini["graded"], gemini["errors"]) == (3, 3, {})
    assert gemini["tokens"] == sum(r.usage.total_tokens for r in results.values() if r.usage)
