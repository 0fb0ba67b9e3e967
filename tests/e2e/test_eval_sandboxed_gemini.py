"""gemwire eval --sandbox with the real Gemini CLI 0.61.0: it reaches its scripted model from
inside the sandbox (the model's port carried in), fixes the example's ``add``, and is graded."""

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


def test_gemini_cli_in_the_sandbox_fixes_add_and_is_graded(
    bubblewrap: None, tmp_path: Path
) -> None:
    # The model's first turns fix add; one attempt keeps it to one Gemini CLI start.
    add = json.loads((EXAMPLE / "tasks.jsonl").read_text().splitlines()[0])
    add.update(
        template=str(EXAMPLE / add["template"]), verify_files=str(EXAMPLE / add["verify_files"])
    )
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(add) + "\n")
    out = tmp_path / "out"
    with ScriptedModel(load_scenario((EXAMPLE / "model.json").read_text())) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        argv = [
            GEMWIRE, "eval", str(tasks), "-o", str(out), "--agents", "gemini", "--sandbox",
            "--executable", str(pinned_gemini()), "--json",
        ]  # fmt: skip
        environ = {**env.environ(), "PATH": os.environ["PATH"]}
        ran = subprocess.run(
            argv, env=environ, capture_output=True, text=True, timeout=300, check=False
        )
        assert ran.returncode == 0, ran.stderr
        assert model.problems == []
        assert len(model.requests) >= 2  # the fix, then the answer after it
    [result] = read_results(out)
    assert (result.task_id, result.ok, result.tool_calls) == ("add.gemini.1", True, 1)
    assert result.grade is not None
    assert (result.grade.status, result.grade.reward) == ("passed", 1.0)
    assert (out / "workspaces" / "add.gemini.1" / "calc.py").read_text().count("a + b") == 1
    assert result.usage is not None
    assert result.usage.total_tokens > 0
    # The session was saved in the attempt's private home, not the configured one.
    assert not list((env.gemini_dir / "tmp").glob("*/chats/*"))
