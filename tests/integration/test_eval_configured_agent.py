"""``gemwire eval --agent NAME=COMMAND``: a configured ACP agent graded beside Gemini CLI
(both stand-ins: fake_gemini_eval.py writes the answer, batch_fake_agent.py only talks);
refused attempt by attempt while gemwire cannot make it ask (docs/acp.md), run once
``--mode`` chooses its mode."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from gemwire.batch import TaskResult, read_results

HERE = Path(__file__).parent
GEMWIRE = str(Path(sys.executable).with_name("gemwire"))


def run_eval(tmp_path: Path, out: str, *args: str) -> dict[str, TaskResult]:
    fake = shlex.join([sys.executable, str(HERE / "batch_fake_agent.py")])
    argv = [
        GEMWIRE, "eval", str(tmp_path / "tasks.jsonl"), "-o", str(tmp_path / out), "--agents",
        "gemini", "--agent", f"fake={fake}", "-j", "2", "--executable", str(tmp_path / "gemini"),
        "--gemini-home", str(tmp_path), *args,
    ]  # fmt: skip
    environ = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    ran = subprocess.run(argv, env=environ, capture_output=True, text=True, timeout=60, check=False)
    assert ran.returncode == 0, ran.stderr
    return {r.task_id: r for r in read_results(tmp_path / out)}


def test_a_configured_agent_is_graded_beside_gemini_once_its_mode_is_chosen(
    tmp_path: Path,
) -> None:
    (tmp_path / "repo").mkdir()
    line = {"id": "fix", "prompt": "fix", "template": "repo", "verify": 'test "$(cat answer)" = 42'}
    (tmp_path / "tasks.jsonl").write_text(json.dumps(line) + "\n")
    launcher = tmp_path / "gemini"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{HERE / "fake_gemini_eval.py"}"\n')
    launcher.chmod(0o755)
    # Its modes unknown, gemwire cannot make it ask: each of its attempts is refused.
    refused = run_eval(tmp_path, "refused")
    assert {i: (r.agent, r.ok, r.error_kind) for i, r in refused.items()} == {
        "fix.gemini.1": ("gemini", True, None),
        "fix.fake.1": ("acp:python", False, "agent"),  # refused before it said its name
    }
    error = refused["fix.fake.1"].error
    assert error is not None
    assert error.message.startswith("acp:batch-fake is not an agent gemwire knows the modes of")
    # A mode chosen for it, it runs, and is graded.
    results = run_eval(tmp_path, "out", "--mode", "default", "-k", "2")
    assert {
        i: (r.agent, r.ok, r.answer, r.grade.status if r.grade else None)
        for i, r in results.items()
    } == {
        "fix.gemini.1": ("gemini", True, "fixed", "passed"),
        "fix.fake.1": ("acp:batch-fake", True, "done fix", "failed"),  # it writes no fix
        "fix.gemini.2": ("gemini", True, "fixed", "passed"),
        "fix.fake.2": ("acp:batch-fake", True, "done fix", "failed"),
    }
    report = subprocess.run(
        [GEMWIRE, "eval", "report", str(tmp_path / "out"), "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    agents = json.loads(report.stdout)["agents"]
    assert {name: a["pass_at"] for name, a in agents.items()} == {
        "gemini": {"1": 1.0, "2": 1.0},
        "fake": {"1": 0.0, "2": 0.0},
    }


def test_a_configured_agent_may_not_take_a_built_in_name(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text('{"prompt": "fix"}\n')
    ran = subprocess.run(
        [GEMWIRE, "eval", str(tmp_path / "t.jsonl"), "-o", str(tmp_path / "out"), "--agent",
         "qwen=my-qwen --acp"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert ran.returncode == 2
    assert ran.stderr.splitlines()[-1] == (
        "Error: 'qwen' is a built-in agent: name the command otherwise"
    )
