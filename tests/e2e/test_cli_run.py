from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gemwire.cli import main
from gemwire.testing import (
    FunctionCall,
    Hang,
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    pinned_gemini,
)

pytestmark = pytest.mark.e2e


def invoke(scenario: Scenario, tmp_path: Path, *args: str) -> tuple[int, str, str]:
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, files=scenario.files, root=tmp_path)
        result = CliRunner().invoke(
            main,
            ["run", "--cwd", str(env.workspace), "--executable", str(pinned_gemini()), *args],
            env=env.environ(),
        )
    return result.exit_code, result.stdout, result.stderr


def test_run_prints_a_transcript_and_the_resume_line(tmp_path: Path) -> None:
    scenario = Scenario(
        turns=[
            Reply(
                [
                    Text("Writing it."),
                    FunctionCall("write_file", {"file_path": "a.txt", "content": "a\n"}),
                ]
            ),
            Reply([Text("Done.")]),
        ]
    )
    code, out, _ = invoke(scenario, tmp_path, "-y", "write a.txt")
    assert code == 0
    lines = out.splitlines()
    assert lines[1:-2] == [
        "> write a.txt",
        "Writing it.",
        "[edit] write_file: a.txt",
        "  -> ok",
        f"  written: {tmp_path.resolve()}/workspace/a.txt",
        "Done.",
    ]
    assert lines[-2].startswith("-- ok (end_turn) · 1 tool call · 1 file changed · 222 tokens")
    session = lines[0].split()[1]
    assert lines[-1] == f"resume: gemini --resume {session}"


def test_run_json_is_events_ending_in_turn_completed(tmp_path: Path) -> None:
    code, out, _ = invoke(Scenario(turns=[Reply([Text("Hi.")])]), tmp_path, "--json", "say hi")
    assert code == 0
    types = [json.loads(line)["type"] for line in out.splitlines()]
    assert types == ["session_started", "user_message", "message_delta", "usage", "turn_completed"]


def test_exit_status_for_a_timeout(tmp_path: Path) -> None:
    code, out, _ = invoke(Scenario(turns=[Reply([Hang()])]), tmp_path, "--timeout", "5", "hi")
    assert code == 124
    assert "timeout: the run took longer than 5 s" in out


def test_exit_status_when_gemini_is_missing(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["run", "--executable", str(tmp_path / "nope"), "hi"])
    assert result.exit_code == 4
    assert result.stderr == f"gemwire: explicit {tmp_path / 'nope'} is not an executable file\n"


def test_json_output_format_and_a_budget_it_cannot_watch_is_a_usage_error() -> None:
    result = CliRunner().invoke(
        main, ["run", "--output-format", "json", "--max-model-turns", "2", "hi"]
    )
    assert result.exit_code == 2
    assert "cannot work together: the json format prints nothing" in result.output
