"""A model that sends what a real deployment can meet: tool arguments nested 3,000 deep (the
real CLI passes them through), and text full of terminal escape sequences."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gemwire.testing import (
    FunctionCall,
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    pinned_gemini,
)

pytestmark = pytest.mark.e2e

GEMWIRE = str(Path(sys.executable).with_name("gemwire"))


def gemwire_run(scenario: Scenario, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``gemwire run`` as its own process (with Python's default recursion limit)."""
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        argv = [GEMWIRE, "run", "--cwd", str(env.workspace), "--executable", str(pinned_gemini())]
        return subprocess.run(
            [*argv, *args],
            env=env.environ(),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )


def test_tool_arguments_nested_3000_deep_end_in_one_turn(tmp_path: Path) -> None:
    deep: Any = []
    for _ in range(2999):
        deep = [deep]
    scenario = Scenario(
        turns=[
            Reply([FunctionCall("read_file", {"file_path": "a.txt", "nested": deep})]),
            Reply([Text("Done.")]),
        ]
    )
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)  # the scripted model encodes the arguments in this process
    try:
        result = gemwire_run(scenario, tmp_path, "--json", "read a.txt")
    finally:
        sys.setrecursionlimit(limit)
    assert "Traceback" not in result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    types = [event["type"] for event in events]
    assert types.count("turn_completed") == 1
    assert types[-1] == "turn_completed"
    [unknown] = [event for event in events if event["type"] == "unknown"]
    assert unknown["raw"].startswith('{"type":"tool_use",')
    assert "[[[[" in unknown["raw"]
    turn = events[-1]
    assert (turn["ok"], turn["answer"]) == (True, "Done.")
    assert result.returncode == 0


def test_escape_sequences_from_a_tool_and_the_model_do_not_reach_the_terminal(
    tmp_path: Path,
) -> None:
    command = "printf 'out\\033]0;owned\\007\\033[2J\\033[31mred\\033[0m'"
    scenario = Scenario(
        turns=[
            Reply([FunctionCall("run_shell_command", {"command": command})]),
            Reply([Text("Hi\x1b[2J\x1b]0;owned\x07 there\u202e.")]),
        ]
    )
    result = gemwire_run(scenario, tmp_path, "-y", "say hi")
    assert result.returncode == 0
    for sequence in ("\x1b", "\x07", "\u202e"):
        assert sequence not in result.stdout
    assert "  | outred" in result.stdout.splitlines()
    assert "Hi there\\u202e." in result.stdout.splitlines()
    result = gemwire_run(scenario, tmp_path / "json", "-y", "--json", "say hi")
    events = [json.loads(line) for line in result.stdout.splitlines()]
    [finished] = [e for e in events if e["type"] == "tool_call_finished"]
    # Gemini CLI 0.61.0 strips escape sequences from shell output itself.
    assert finished["output"] == "outred"
    # Gemini CLI 0.61.0 sometimes drops ESC and BEL from the model's text itself (as in the
    # first turn of a session), never the bidi override.
    assert events[-1]["answer"].endswith(" there\u202e.")
