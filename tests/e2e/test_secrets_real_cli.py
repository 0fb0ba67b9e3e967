"""A model that runs ``env | grep _KEY`` through the real Gemini CLI and repeats a key: the
``--json`` events, the result and the HTML export of the session carry every key masked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from gemwire.events import Event, ToolCallFinished, TurnCompleted
from gemwire.testing import (
    FAKE_API_KEY,
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
OPENAI_KEY = "sk-proj-FAKE0123456789abcdefghij"


def test_keys_a_model_prints_are_masked_in_json_events_and_the_html_export(
    tmp_path: Path,
) -> None:
    scenario = Scenario(
        turns=[
            Reply([FunctionCall("run_shell_command", {"command": "env | grep _KEY | sort"})]),
            Reply([Text(f"Found them. The OpenAI one is {OPENAI_KEY}.")]),
        ]
    )
    with ScriptedModel(scenario) as model:
        home = IsolatedGemini(model.url, root=tmp_path)
        env = {**home.environ(), "OPENAI_API_KEY": OPENAI_KEY}
        argv = [GEMWIRE, "run", "--json", "-y", "--cwd", str(home.workspace)]
        argv += ["--executable", str(pinned_gemini()), "list the keys"]
        run = subprocess.run(argv, env=env, capture_output=True, timeout=300, check=False)
        where = ["latest", "--project", str(home.workspace)]
        export = subprocess.run(
            [GEMWIRE, "sessions", "export", *where, "--format", "html"],
            env=env,
            capture_output=True,
            timeout=120,
            check=False,
        )
    assert run.returncode == 0, run.stderr.decode()
    events = [msgspec.json.decode(line, type=Event) for line in run.stdout.splitlines() if line]
    [shell] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert shell.output is not None
    assert "GEMINI_API_KEY=***" in shell.output
    assert "OPENAI_API_KEY=***" in shell.output
    completed = events[-1]
    assert isinstance(completed, TurnCompleted)
    assert completed.answer == "Found them. The OpenAI one is ***."
    assert export.returncode == 0, export.stderr.decode()
    assert b"OPENAI_API_KEY=***" in export.stdout
    assert b"The OpenAI one is ***." in export.stdout
    for key in (FAKE_API_KEY, OPENAI_KEY):
        assert key.encode() not in run.stdout + run.stderr
        assert key.encode() not in export.stdout
