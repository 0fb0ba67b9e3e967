"""Finding the CLI where npm, Homebrew and nvm put it on Windows and macOS."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gemwire.runners import discovery
from gemwire.runners.acp.gemini_cli import GeminiCliQuirks
from gemwire.runners.acp.quirks import quirks_for
from gemwire.runners.agents import AGENTS, AgentName, AgentSpec, agent_identity, resolve_agent
from gemwire.runners.discovery import (
    GeminiExecutable,
    common_locations,
    shim_command,
)
from gemwire.runners.gemini_options import GeminiOptions, build_argv

# What npm 10 (cmd-shim 6) writes for `npm install -g @google/gemini-cli` on Windows.
NPM_CMD = r"""@ECHO off
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

endLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & "%_prog%"  "%dp0%\node_modules\@google\gemini-cli\dist\index.js" %*
"""
NPM_PS1 = r"""#!/usr/bin/env pwsh
$basedir=Split-Path $MyInvocation.MyCommand.Definition -Parent

$exe=""
if ($PSVersionTable.PSVersion -lt "6.0" -or $IsWindows) {
  $exe=".exe"
}
$ret=0
if (Test-Path "$basedir/node$exe") {
  if ($MyInvocation.ExpectingInput) {
    $input | & "$basedir/node$exe"  "$basedir/node_modules/@google/gemini-cli/dist/index.js" $args
  } else {
    & "$basedir/node$exe"  "$basedir/node_modules/@google/gemini-cli/dist/index.js" $args
  }
  $ret=$LASTEXITCODE
}
exit $ret
"""
SCRIPT = ("node_modules", "@google", "gemini-cli", "dist", "index.js")


@pytest.mark.parametrize(("name", "text"), [("gemini.cmd", NPM_CMD), ("gemini.ps1", NPM_PS1)])
def test_an_npm_shim_runs_as_its_node_script_with_the_node_beside_it(
    tmp_path: Path, name: str, text: str
) -> None:
    (tmp_path / name).write_text(text)
    (tmp_path / "node.exe").write_text("")
    assert shim_command(tmp_path / name) == (
        str(tmp_path / "node.exe"),
        str(tmp_path.joinpath(*SCRIPT)),
    )


def test_an_npm_shim_without_a_node_beside_it_runs_the_node_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "node").write_text("")
    (bin_dir / "node").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    (tmp_path / "GEMINI.CMD").write_text(NPM_CMD)
    assert shim_command(tmp_path / "GEMINI.CMD") == (
        str(bin_dir / "node"),
        str(tmp_path.joinpath(*SCRIPT)),
    )


def test_a_program_or_an_unreadable_shim_runs_as_itself(tmp_path: Path) -> None:
    (tmp_path / "odd.cmd").write_text("@echo off\r\nnode %*\r\n")
    assert shim_command(tmp_path / "gemini") == (str(tmp_path / "gemini"),)
    assert shim_command(tmp_path / "odd.cmd") == (str(tmp_path / "odd.cmd"),)
    assert shim_command(tmp_path / "missing.cmd") == (str(tmp_path / "missing.cmd"),)


def test_the_argv_starts_with_the_shims_command() -> None:
    # The prompt is no option (it travels on stdin): what follows are gemwire's own flags.
    executable = GeminiExecutable(
        path=r"C:\Users\a\AppData\Roaming\npm\gemini.cmd",
        version="0.61.0",
        source="PATH",
        command=("node.exe", "index.js"),
    )
    argv = build_argv(executable, GeminiOptions(model="gemini-2.5-flash"))
    assert argv[:6] == [
        "node.exe",
        "index.js",
        "--output-format",
        "stream-json",
        "--model",
        "gemini-2.5-flash",
    ]


def test_nvm_installs_are_found_newest_node_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("USERPROFILE", str(tmp_path))  # what expanduser reads on Windows
    for version in ("v18.20.1", "v22.1.0", "v20.9.0"):
        launcher = tmp_path / ".nvm" / "versions" / "node" / version / "bin" / "gemini"
        launcher.parent.mkdir(parents=True)
        launcher.write_text("")
    macos = discovery._LOCATIONS["darwin"]
    found = [path for path in common_locations(macos) if ".nvm" in path.parts]
    assert [path.parts[-3] for path in found] == ["v22.1.0", "v20.9.0", "v18.20.1"]


def test_homebrew_comes_first_on_macos_and_npms_folder_on_windows() -> None:
    assert discovery._LOCATIONS["darwin"][:2] == (
        "/opt/homebrew/bin/gemini",
        "/usr/local/bin/gemini",
    )
    windows = [os.path.normpath(p) for p in discovery._LOCATIONS["win32"]]
    assert windows[0] == os.path.normpath("~/AppData/Roaming/npm/gemini.cmd")


# Each pinned agent's bin in its package.json (clis/*/node_modules/<package>/package.json).
AGENT_BINS = {
    "claude": "dist/index.js",
    "codex": "bin/codex-acp.js",
    "qwen": "cli-entry.js",
    "opencode": "bin/opencode.exe",  # a native program: its shim runs it, no node
    "gemini": "bundle/gemini.js",
}
_HEAD = "@ECHO off\r\nGOTO start\r\n:find_dp0\r\nSET dp0=%~dp0\r\nEXIT /b\r\n:start\r\nSETLOCAL\r\nCALL :find_dp0\r\n"


def npm_cmd_shim(target: str) -> str:
    """The .cmd npm 10 (cmd-shim 6, writeShim_) links into node_modules/.bin for ``target``
    (relative to .bin, backslashes): through node for a script with a shebang, else as it is."""
    if not target.endswith(".js"):
        return f'{_HEAD}"%dp0%\\{target}"   %*\r\n'
    return (
        f"{_HEAD}\r\n"
        'IF EXIST "%dp0%\\node.exe" (\r\n  SET "_prog=%dp0%\\node.exe"\r\n) ELSE (\r\n'
        '  SET "_prog=node"\r\n  SET PATHEXT=%PATHEXT:;.JS;=;%\r\n)\r\n\r\n'
        "endLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & "
        f'"%_prog%"  "%dp0%\\{target}" %*\r\n'
    )


def npm_windows_install(folder: Path, spec: AgentSpec) -> Path:
    """``spec``'s package as npm installs it on Windows into ``folder``: its manifest, and
    in .bin the three launchers (the one without a suffix is a shell script for Git Bash)
    and a node.exe (so that the node chosen does not depend on ``PATH``). Returns .bin."""
    package = folder / "node_modules" / spec.package
    package.mkdir(parents=True)
    (package / "package.json").write_text(
        json.dumps({"name": spec.package, "version": spec.version})
    )
    bin_dir = folder / "node_modules" / ".bin"
    bin_dir.mkdir()
    target = "\\".join(("..", *spec.package.split("/"), *AGENT_BINS[spec.name].split("/")))
    for name, text in (
        (spec.executable, f'#!/bin/sh\nexec node "$basedir/{target}" "$@"\n'),
        (f"{spec.executable}.cmd", npm_cmd_shim(target)),
        (f"{spec.executable}.ps1", "# the PowerShell shim\n"),
    ):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)  # Windows runs any file; here the bit decides
    (bin_dir / "node.exe").write_text("")
    return bin_dir


NPM_AGENTS = sorted(name for name, spec in AGENTS.items() if spec.pinned_dir)
"""The agents npm installs (antigravity is gemwire's own command)."""


def expected_command(bin_dir: Path, spec: AgentSpec) -> tuple[str, ...]:
    target = bin_dir.joinpath("..", *spec.package.split("/"), *AGENT_BINS[spec.name].split("/"))
    if target.suffix == ".exe":
        return (str(target), *spec.args)
    return (str(bin_dir / "node.exe"), str(target), *spec.args)


@pytest.mark.parametrize("name", NPM_AGENTS)
def test_every_pinned_agent_runs_on_windows_as_its_cmd_shim_runs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: AgentName
) -> None:
    spec = AGENTS[name]
    monkeypatch.setenv("GEMWIRE_CLIS_DIR", str(tmp_path / "clis"))
    bin_dir = npm_windows_install(tmp_path / "clis" / spec.pinned_dir, spec)
    found = resolve_agent(name, cwd=str(tmp_path), environ={"PATH": ""}, platform="win32")
    assert (found.command, found.source, found.version) == (
        expected_command(bin_dir, spec),
        "pinned",
        spec.version,
    )


@pytest.mark.parametrize("name", NPM_AGENTS)
def test_every_agent_in_a_projects_node_modules_runs_on_windows_as_its_cmd_shim_runs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: AgentName
) -> None:
    spec = AGENTS[name]
    monkeypatch.setenv("GEMWIRE_CLIS_DIR", str(tmp_path / "no-clis"))
    bin_dir = npm_windows_install(tmp_path / "project", spec)
    (tmp_path / "project" / "src").mkdir()
    found = resolve_agent(
        name, cwd=str(tmp_path / "project" / "src"), environ={"PATH": ""}, platform="win32"
    )
    assert (found.command, found.source, found.version) == (
        expected_command(bin_dir, spec),
        "node_modules",
        spec.version,
    )


@pytest.mark.parametrize("name", NPM_AGENTS)
def test_an_agent_run_as_its_windows_shim_runs_it_is_still_known_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: AgentName
) -> None:
    # Its events' agent field before it says its name, and the quirks chosen by it.
    spec = AGENTS[name]
    monkeypatch.setenv("GEMWIRE_CLIS_DIR", str(tmp_path / "clis"))
    npm_windows_install(tmp_path / "clis" / spec.pinned_dir, spec)
    found = resolve_agent(name, cwd=str(tmp_path), environ={"PATH": ""}, platform="win32")
    assert agent_identity(found.command) == f"acp:{spec.reported_name}"
    assert isinstance(quirks_for(agent_identity(found.command)), GeminiCliQuirks) is (
        name == "gemini"
    )


def test_a_windows_command_line_is_known_by_its_script_s_package() -> None:
    script = r"C:\Users\ana\AppData\Roaming\npm\node_modules\@google\gemini-cli\bundle\gemini.js"
    assert agent_identity((r"C:\Program Files\nodejs\node.exe", script, "--acp")) == (
        "acp:gemini-cli"
    )
    assert agent_identity((r"C:\tools\OpenCode.exe", "acp")) == "acp:OpenCode"
    assert agent_identity(("node", "/srv/my-agent/index.js")) == "acp:node"
