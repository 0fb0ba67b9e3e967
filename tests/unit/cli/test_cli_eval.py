"""``gemwire eval``'s usage errors: refused before anything starts, one line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gemwire.cli import main

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "eval" / "tasks.jsonl"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--agents", "gemini,foo"],
            "Error: unknown agent 'foo'; known: claude, codex, qwen, opencode, gemini, antigravity",
        ),
        (["--agents", " , "], "Error: name at least one agent"),
        (["--agents", "qwen,qwen"], "Error: an agent is named twice"),
        (["-k", "0"], "Error: Invalid value for '-k': 0 is not in the range x>=1."),
    ],
)
def test_bad_runs_are_refused(tmp_path: Path, args: list[str], message: str) -> None:
    out = tmp_path / "out"
    got = CliRunner().invoke(main, ["eval", str(EXAMPLE), "-o", str(out), *args])
    assert got.exit_code == 2
    assert got.output.splitlines()[-1] == message
    assert not out.exists()


def test_a_batch_folder_is_not_an_eval(tmp_path: Path) -> None:
    line = (
        '{"task_id": "plain", "ok": true, "error": null, "answer": "", "files_changed": [], '
        '"usage": null, "duration_s": 1.0, "attempts": 1, "session_id": null, "resume": null, '
        '"workspace": "/w", "agent": "gemini"}\n'
    )
    (tmp_path / "results.jsonl").write_text(line)
    got = CliRunner().invoke(main, ["eval", "report", str(tmp_path)])
    assert got.exit_code == 2
    assert "is not an eval's output folder" in got.output
