"""The pinned Gemini CLI as npm installs it on each OS: on Windows, the ``.cmd`` launcher
and the node script it names, not the shell script npm writes beside it for Git Bash."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gemwire.errors import GeminiNotFound
from gemwire.testing import pinned_gemini, pinned_gemini_command

# What npm 10 (cmd-shim 6) writes to node_modules/.bin/gemini.cmd for a project-local install.
LOCAL_CMD = r"""@ECHO off
GOTO start
:find_dp0
SET dp0=%~dp0
EXIT /b
:start
SETLOCAL
CALL :find_dp0

IF EXIST "%dp0%\node.exe" (
  SET "_prog=%dp0%\node.exe"
) ELSE (
  SET "_prog=node"
  SET PATHEXT=%PATHEXT:;.JS;=;%
)

endLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & "%_prog%"  "%dp0%\..\@google\gemini-cli\dist\index.js" %*
"""


@pytest.fixture
def clis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``$GEMWIRE_CLIS_DIR`` with 0.61.0 installed as npm does on Windows: three launchers
    and a ``node.exe`` beside them (so that the node chosen does not depend on ``PATH``)."""
    bin_dir = tmp_path / "gemini-0.61.0" / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "gemini").write_text('#!/bin/sh\nexec node "$basedir/../@google/gemini-cli"\n')
    (bin_dir / "gemini.cmd").write_text(LOCAL_CMD)
    (bin_dir / "gemini.ps1").write_text("# the PowerShell shim\n")
    (bin_dir / "node.exe").write_text("")
    monkeypatch.setenv("GEMWIRE_CLIS_DIR", str(tmp_path))
    return tmp_path


def test_windows_runs_the_cmd_launcher_as_its_node_script(clis: Path) -> None:
    bin_dir = clis / "gemini-0.61.0" / "node_modules" / ".bin"
    assert pinned_gemini("0.61.0", platform="win32") == bin_dir / "gemini.cmd"
    assert pinned_gemini_command("0.61.0", platform="win32") == (
        str(bin_dir / "node.exe"),
        str(bin_dir / ".." / "@google" / "gemini-cli" / "dist" / "index.js"),
    )


def test_posix_runs_the_launcher_itself(clis: Path) -> None:
    launcher = clis / "gemini-0.61.0" / "node_modules" / ".bin" / "gemini"
    assert pinned_gemini("0.61.0", platform="linux") == launcher
    assert pinned_gemini_command("0.61.0", platform="darwin") == (str(launcher),)


def test_a_missing_windows_launcher_says_how_to_install_it(clis: Path) -> None:
    (clis / "gemini-0.61.0" / "node_modules" / ".bin" / "gemini.cmd").unlink()
    with pytest.raises(GeminiNotFound) as caught:
        pinned_gemini_command("0.61.0", platform="win32")
    folder = clis / "gemini-0.61.0"
    assert str(caught.value) == (
        f"pinned Gemini CLI 0.61.0 is not installed in {folder}: run `make setup` "
        "(it runs `npm ci` there from the committed lockfile)"
    )
    assert caught.value.executable == str(folder / "node_modules" / ".bin" / "gemini.cmd")


def _runs_pinned_launcher(node: ast.expr) -> bool:
    """``str(pinned_gemini(...))``: the launcher's path, which Windows cannot run itself."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "str"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Call)
        and isinstance(node.args[0].func, ast.Name)
        and node.args[0].func.id == "pinned_gemini"
    )


def test_no_test_or_benchmark_starts_the_pinned_launcher_itself() -> None:
    # A command starts with pinned_gemini_command() (on Windows, the node script the .cmd
    # names); the launcher's path is what --executable takes (find_gemini reads the .cmd).
    repo = Path(__file__).resolve().parents[3]
    found = []
    for path in sorted([*(repo / "tests").rglob("*.py"), *(repo / "bench").rglob("*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.List | ast.Tuple):
                continue
            for before, element in zip([None, *node.elts], node.elts, strict=False):
                given = isinstance(before, ast.Constant) and before.value == "--executable"
                if _runs_pinned_launcher(element) and not given:
                    found.append(f"{path.relative_to(repo).as_posix()}:{element.lineno}")
    assert found == []
