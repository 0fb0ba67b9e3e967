"""The hosted CI workflow (.github/workflows/portable.yml) stays valid YAML of the shape its
docs promise, and names only tests that exist. It cannot run here (CONTRIBUTING.md)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "portable.yml"


def _workflow() -> dict[Any, Any]:
    data = yaml.safe_load(WORKFLOW.read_text())
    assert isinstance(data, dict)
    return data


def _steps() -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = _workflow()["jobs"]["portable"]["steps"]
    return steps


def test_the_matrix_is_linux_macos_and_windows() -> None:
    job = _workflow()["jobs"]["portable"]
    assert job["strategy"]["matrix"]["os"] == ["ubuntu-latest", "macos-latest", "windows-latest"]
    assert job["runs-on"] == "${{ matrix.os }}"
    assert job["strategy"]["fail-fast"] is False


def test_it_runs_on_pushes_and_pull_requests() -> None:
    # YAML 1.1 reads a bare `on` as True; GitHub reads it as the key "on".
    assert set(_workflow()[True]) == {"push", "pull_request"}


def _makefile_check_lines() -> list[str]:
    text = (ROOT / "Makefile").read_text()
    recipe = text.split("\ncheck:", 1)[1].split("\n\n", 1)[0]
    return [line.strip() for line in recipe.splitlines()[1:]]


def test_it_type_checks_each_platform_as_make_check_does() -> None:
    # make check runs on Linux, whose mypy needs no --platform; the workflow names it.
    windows_tests = " ".join(_makefile_list("WINDOWS_TESTS"))
    make = [
        line.replace("$(BIN)/mypy", "python -m mypy").replace("$(WINDOWS_TESTS)", windows_tests)
        for line in _makefile_check_lines()
        if line.startswith("$(BIN)/mypy")
    ]
    make = [line if "--platform" in line else f"{line} --platform linux" for line in make]
    workflow = [
        line.strip()
        for step in _steps()
        for line in step.get("run", "").splitlines()
        if line.strip().startswith("python -m mypy")
    ]
    assert sorted(workflow) == sorted(make)
    platforms = [shlex.split(line)[4] for line in workflow]
    assert sorted(platforms) == ["darwin", "linux", "win32"]


def test_every_test_path_it_names_exists() -> None:
    named = [
        word
        for step in _steps()
        if "pytest" in step.get("run", "")
        for word in shlex.split(step["run"])
        if word.startswith("tests/")
    ]
    assert named, "no test paths found"
    assert [path for path in named if not (ROOT / path).exists()] == []


def test_every_step_uses_an_action_or_runs_a_command() -> None:
    assert [step for step in _steps() if ("uses" in step) == ("run" in step)] == []


def _makefile_list(name: str) -> list[str]:
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    line = next(line for line in text.splitlines() if line.startswith(f"{name} :="))
    return line.split(":=", 1)[1].split()


_ON_WINDOWS = {None: True, "runner.os == 'Windows'": True, "runner.os != 'Windows'": False}
"""The conditions the workflow's steps use, and whether each lets a step run on Windows."""


def test_what_runs_on_windows_is_what_make_check_type_checks_as_windows() -> None:
    steps = [step for step in _steps() if "pytest" in step.get("run", "")]
    assert [step["if"] for step in steps if step.get("if") not in _ON_WINDOWS] == []
    ran = {
        word
        for step in steps
        if _ON_WINDOWS[step.get("if")] and "-m e2e" not in step["run"]
        for word in shlex.split(step["run"])
        if word.startswith("tests/")
    }
    checked = _makefile_list("WINDOWS_TESTS")
    assert sorted(ran) == sorted(checked)
    win32 = next(
        line
        for step in _steps()
        for line in step.get("run", "").splitlines()
        if "--platform win32" in line
    )
    assert shlex.split(win32)[5:] == ["src", *checked]


def _named(condition: str | None) -> set[str]:
    return {
        word
        for step in _steps()
        if "pytest" in step.get("run", "") and step.get("if") == condition
        for word in shlex.split(step["run"])
        if word.startswith("tests/")
    }


def test_what_runs_on_windows_alone_runs_on_linux_and_macos_too() -> None:
    elsewhere = _named(None) | _named("runner.os != 'Windows'")
    windows_only = _named("runner.os == 'Windows'")
    assert windows_only, "no Windows-only step found"
    assert [
        path
        for path in windows_only
        if not any(path == other or path.startswith(f"{other}/") for other in elsewhere)
    ] == []
