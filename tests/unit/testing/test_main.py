from __future__ import annotations

import json
from pathlib import Path

import pytest

from gemwire.testing.__main__ import main


def write_case(tmp_path: Path, case: object) -> Path:
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case))
    return path


@pytest.mark.parametrize(
    ("case", "message"),
    [
        (
            {
                "runs": [{"prompt": "x"}],
                "scenario": {"turns": [{"type": "reply", "chunks": [{"type": "text"}]}]},
            },
            "Object missing required field `text` - at `$.scenario.turns[0].chunks[0]`",
        ),
        ({"runs": [], "scenario": {"turns": []}}, "a case needs at least one run"),
        (
            {"runs": [{"prompt": "x"}], "versions": ["9.9.9"], "scenario": {"turns": []}},
            "versions ['9.9.9'] are not pinned (pinned: 0.61.0, 0.30.0, 0.15.4)",
        ),
        (
            {"runs": [{"prompt": "x"}], "formats": ["text"], "scenario": {"turns": []}},
            "Invalid enum value 'text' - at `$.formats[0]`",
        ),
    ],
)
def test_bad_cases_are_reported_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: object, message: str
) -> None:
    path = write_case(tmp_path, case)
    assert main(["run", str(path)]) == 2
    assert main(["record", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {path}: {message}\n" * 2
    assert not (tmp_path / "out").exists()


def test_a_missing_case_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(tmp_path / "nope.json")]) == 2
    assert capsys.readouterr().err == (
        f"error: {tmp_path / 'nope.json'}: cannot read: No such file or directory\n"
    )
