"""How `gemwire run` ends: its exit status, and what the outcome line says."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gemwire.cli import main
from gemwire.cli.exit_codes import EXIT_BUDGET
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


def test_max_tool_calls_exits_with_the_budget_status_not_ctrl_c_s(tmp_path: Path) -> None:
    scenario = Scenario(
        turns=[Reply([Text("Listing."), FunctionCall("list_directory", {"dir_path": "."})])]
    )
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        where = ["--cwd", str(env.workspace), "--executable", str(pinned_gemini())]
        args = ["run", *where, "--max-tool-calls", "0", "-y", "list"]
        result = CliRunner().invoke(main, args, env=env.environ())
    assert result.exit_code == EXIT_BUDGET == 11
    outcome = next(line for line in result.stdout.splitlines() if line.startswith("-- "))
    # The CLI was stopped: its exit code (0, -9) says nothing about why the turn failed.
    assert outcome.startswith(
        "-- FAILED (cancelled) · cancelled: more than 0 tool calls (max_tool_calls) · "
    )
    assert "exit code" not in outcome


def test_a_bad_resume_points_to_gemwire_s_own_session_list(tmp_path: Path) -> None:
    with ScriptedModel(Scenario(turns=[Reply([Text("hi")], repeat=2)])) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        where = ["--cwd", str(env.workspace), "--executable", str(pinned_gemini())]
        first = CliRunner().invoke(main, ["run", *where, "hi"], env=env.environ())
        assert first.exit_code == 0  # a session to resume, so Gemini names --list-sessions
        result = CliRunner().invoke(main, ["run", *where, "-r", "x", "hi"], env=env.environ())
    assert result.exit_code == 1
    assert "Use --list-sessions to see available sessions" in result.stdout
    assert result.stderr == (
        "gemwire: `gemwire sessions list` shows the sessions here, numbered as "
        "-r/--resume takes them (an index, a session id, or latest)\n"
    )
