"""gemwire eval --sandbox with a real ACP agent, Qwen Code 0.24.4: started in the attempt's
sandbox (a process an attempt), it reaches its scripted model through the carried port,
fixes the example's ``add`` with its own tools (the client offers none), and is graded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gemwire.batch import read_results
from gemwire.testing import FunctionCall, Reply, Scenario, ScriptedModel, Text
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
