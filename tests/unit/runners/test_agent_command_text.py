"""An agent's command given as text (``GEMWIRE_AGENT_<NAME>``, ``gemwire serve --agent``)
is split as the OS it runs on splits it, and on Windows an npm shim runs as what it runs.
Runs on Windows too (the CI workflow's Windows job)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import pytest

from gemwire.cli.serve import _agent_command
from gemwire.errors import AgentNotFound
from gemwire.runners.agents import command_from_text, resolve_agent

CLAUDE_CMD = r"C:\Users\me\AppData\Roaming\npm\claude-code-acp.cmd"

# What npm 10 (cmd-shim 6) links into a global install's folder for a node script.
NPM_SHIM = (
    "@ECHO off\r\nGOTO start\r\n:find_dp0\r\nSET dp0=%~dp0\r\nEXIT /b\r\n:start\r\nSETLOCAL\r\n"
    'CALL :find_dp0\r\n\r\nIF EXIST "%dp0%\\node.exe" (\r\n  SET "_prog=%dp0%\\node.exe"\r\n'
    ') ELSE (\r\n  SET "_prog=node"\r\n  SET PATHEXT=%PATHEXT:;.JS;=;%\r\n)\r\n\r\n'
    "endLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & "
    '"%_prog%"  "%dp0%\\node_modules\\@zed-industries\\claude-code-acp\\dist\\index.js" %*\r\n'
)


def test_a_configured_windows_path_keeps_its_backslashes() -> None:
    found = resolve_agent(
        "claude", environ={"GEMWIRE_AGENT_CLAUDE": f"{CLAUDE_CMD} --flag"}, platform="win32"
    )
    # Not a file here, so it runs as it is: only the splitting is checked.
    assert (found.command, found.source) == ((CLAUDE_CMD, "--flag"), "GEMWIRE_AGENT_CLAUDE")


def test_a_configured_npm_shim_runs_as_its_node_script_on_windows(tmp_path: Path) -> None:
    npm = tmp_path / "Roaming npm"
    npm.mkdir()
    (npm / "claude-code-acp.cmd").write_text(NPM_SHIM)
    (npm / "node.exe").write_text("")
    configured = f'"{npm / "claude-code-acp.cmd"}" --flag "a b"'
    found = resolve_agent("claude", environ={"GEMWIRE_AGENT_CLAUDE": configured}, platform="win32")
    script = npm.joinpath("node_modules", "@zed-industries", "claude-code-acp", "dist", "index.js")
    assert found.command == (str(npm / "node.exe"), str(script), "--flag", "a b")
    assert command_from_text(configured, "win32") == found.command


def test_elsewhere_the_command_is_a_shell_s_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "agent.cmd").write_text(NPM_SHIM)  # no shim outside Windows: it runs as named
    monkeypatch.chdir(tmp_path)
    words = ("agent.cmd", "--root", "my work")
    assert command_from_text("agent.cmd --root 'my work'", "darwin") == words


def test_a_configured_command_with_a_quote_left_open_is_a_typed_error() -> None:
    environ = {"GEMWIRE_AGENT_QWEN": "qwen --key 'sk-secret"}
    with pytest.raises(AgentNotFound) as caught:
        resolve_agent("qwen", environ=environ, platform="linux")
    # The text is not repeated: it may hold a key.
    assert str(caught.value) == "$GEMWIRE_AGENT_QWEN is not a command: No closing quotation"


def test_serve_s_agent_option_splits_as_the_os_does() -> None:
    expected = ("mine", ("my-agent", "--acp", "a b"))
    assert _agent_command('mine=my-agent --acp "a b"') == expected


@pytest.mark.skipif(sys.platform == "win32", reason="a quote left open runs to the end there")
def test_serve_s_agent_option_with_a_quote_left_open_is_a_usage_error() -> None:
    with pytest.raises(click.BadParameter) as caught:
        _agent_command("mine=my-agent 'open")
    assert caught.value.message == """"mine=my-agent 'open": No closing quotation"""
