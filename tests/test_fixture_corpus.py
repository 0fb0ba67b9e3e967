"""The recorded corpus is complete, current with its cases, and free of machine paths."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from kit.corpus import CASES as CASE_FOLDER, FIXTURES, RECORDINGS

from gemwire.testing import Scenario, load_case

CASES = sorted(CASE_FOLDER.glob("*.json"))

# Strings that only exist on the recording machine: temporary folders, the scripted
# model's port, a real home, this checkout (the pinned CLIs live in it).
MACHINE_MARKERS = [
    b"gemwire-rec-",
    b"127.0.0.1:",
    b"/root/",
    b"/home/",
    str(Path(__file__).resolve().parents[1]).encode(),
]


@pytest.mark.parametrize("case_path", CASES, ids=lambda p: p.stem)
def test_every_case_is_recorded_for_each_version_and_format(case_path: Path) -> None:
    case = load_case(case_path)
    for version in case.versions:
        folder = RECORDINGS / version / case_path.stem
        meta = json.loads((folder / "meta.json").read_text())
        assert meta["cli_version"] == version
        # A case edited after recording must be re-recorded (`make record`).
        assert msgspec.convert(meta["scenario"], Scenario) == case.scenario
        assert meta["settings"] == case.settings
        assert meta.get("env", {}) == case.env
        assert sorted(meta["formats"]) == sorted(case.formats)
        for output_format, recorded in meta["formats"].items():
            assert [r["prompt"] for r in recorded["runs"]] == [r.prompt for r in case.runs]
            assert recorded["model_problems"] == []
            for n, run in enumerate(recorded["runs"], start=1):
                assert run["argv"][:3] == ["gemini", "-o", output_format]
                assert not run["timed_out"]
                assert (folder / output_format / f"run-{n}.stdout").is_file()
                assert (folder / output_format / f"run-{n}.stderr").is_file()


def test_no_recording_is_left_without_a_case() -> None:
    names = {p.stem for p in CASES}
    recorded = {p.name for version in RECORDINGS.iterdir() for p in version.iterdir()}
    assert recorded <= names


def test_recordings_hold_no_machine_specific_paths() -> None:
    offenders = [
        str(path.relative_to(FIXTURES))
        for path in sorted(RECORDINGS.rglob("*"))
        if path.is_file()
        and (
            any(marker in path.read_bytes() for marker in MACHINE_MARKERS)
            or any(marker.decode() in str(path.relative_to(FIXTURES)) for marker in MACHINE_MARKERS)
        )
    ]
    assert offenders == []


def test_exit_codes_match_what_the_cli_is_known_to_do() -> None:
    """A few anchors from docs/gemini-cli.md#exit-codes, checked against the recordings."""
    expected = {
        "invalid_api_key": 144,
        "persistent_500": 244,
        "max_session_turns": 53,
        "plain_answer": 0,
    }
    for name, code in expected.items():
        meta = json.loads((RECORDINGS / "0.61.0" / name / "meta.json").read_text())
        assert {f: [r["exit_code"] for r in v["runs"]] for f, v in meta["formats"].items()} == {
            "stream-json": [code],
            "json": [code],
        }
