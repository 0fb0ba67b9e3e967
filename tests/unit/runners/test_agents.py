"""Built-in agent names: where `resolve_agent` looks, in order, and what it says when it
finds nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click
import msgspec
import pytest
from click.testing import CliRunner

from gemwire.checks import check_agents
from gemwire.cli import main
from gemwire.cli.exit_codes import EXIT_NOT_FOUND
from gemwire.errors import AgentNotFound
from gemwire.runners.agents import AGENTS, resolve_agent


def install(folder: Path, package: str, version: str, executable: str) -> Path:
    """A fake npm install: the package's manifest and a launcher linked into .bin."""
    package_dir = folder / "node_modules" / package
    (package_dir / "bin").mkdir(parents=True)
    (package_dir / "package.json").write_text(json.dumps({"name": package, "version": version}))
    launcher = package_dir / "bin" / "cli.js"
    launcher.write_text("#!/bin/sh\n")
    launcher.chmod(0o755)
    (folder / "node_modules" / ".bin").mkdir(parents=True, exist_ok=True)
    link = folder / "node_modules" / ".bin" / executable
    link.symlink_to(launcher)
    return link


@pytest.fixture
def clis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "clis"
    folder.mkdir()
    monkeypatch.setenv("GEMWIRE_CLIS_DIR", str(folder))
    return folder


def test_the_pinned_install_comes_with_its_acp_arguments_and_version(
    clis: Path, tmp_path: Path
) -> None:
    spec = AGENTS["opencode"]
    link = install(clis / spec.pinned_dir, spec.package, spec.version, spec.executable)
    found = resolve_agent("opencode", cwd=str(tmp_path), environ={"PATH": ""})
    assert (found.command, found.source, found.version) == ((str(link), "acp"), "pinned", "1.18.33")


def test_a_configured_command_wins_then_node_modules_then_path(clis: Path, tmp_path: Path) -> None:
    spec = AGENTS["qwen"]
    project = tmp_path / "project"
    local = install(project, spec.package, "0.20.0", "qwen")
    on_path = install(tmp_path / "global", spec.package, "0.21.0", "qwen")
    path = {"PATH": str(on_path.parent)}
    configured = {**path, "GEMWIRE_AGENT_QWEN": "npx -y '@qwen-code/qwen-code' --acp"}
    assert resolve_agent("qwen", cwd=str(project / "sub"), environ=configured).command == (
        "npx",
        "-y",
        "@qwen-code/qwen-code",
        "--acp",
    )
    (project / "sub").mkdir()
    found = resolve_agent("qwen", cwd=str(project / "sub"), environ=path)
    assert (found.command, found.source, found.version) == (
        (str(local), "--acp"),
        "node_modules",
        "0.20.0",
    )
    found = resolve_agent("qwen", cwd=str(tmp_path), environ=path)
    assert (found.source, found.version) == ("PATH", "0.21.0")


def test_nothing_found_names_the_places_and_the_install(clis: Path, tmp_path: Path) -> None:
    with pytest.raises(AgentNotFound) as caught:
        resolve_agent("codex", cwd=str(tmp_path), environ={"PATH": ""})
    assert str(caught.value) == (
        "Codex (codex-acp) not found (looked at $GEMWIRE_AGENT_CODEX, the pinned install, "
        "node_modules/.bin and $PATH): npm install -g @agentclientprotocol/codex-acp, or set "
        "GEMWIRE_AGENT_CODEX to the command that starts it in ACP mode"
    )
    with pytest.raises(AgentNotFound, match="unknown agent 'goose'"):
        resolve_agent("goose")


def test_doctor_says_which_agents_are_there_and_whether_they_have_credentials(
    clis: Path, tmp_path: Path
) -> None:
    spec = AGENTS["claude"]
    install(clis / spec.pinned_dir, spec.package, "0.16.1", spec.executable)
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "auth.json").write_text("{}")
    checks = {c.name: c for c in check_agents(tmp_path, home=tmp_path, environ={"PATH": ""})}
    assert list(checks) == [f"agent {name}" for name in AGENTS]
    claude = checks["agent claude"]
    assert (claude.status, claude.summary) == (
        "warn",
        "Claude Code (claude-agent-acp) 0.16.1, but no credentials found",
    )
    assert claude.details[1] == "gemwire is tested with 0.101.0 and 0.16.2"
    codex = checks["agent codex"]
    assert (codex.status, codex.summary) == ("warn", "Codex (codex-acp) is not installed")
    with_key = check_agents(
        tmp_path, home=tmp_path, environ={"PATH": "", "ANTHROPIC_API_KEY": "secret"}
    )
    assert with_key[0].status == "ok"
    assert with_key[0].details[-1] == "credentials: $ANTHROPIC_API_KEY"
    assert "secret" not in repr(with_key)


@pytest.mark.parametrize(
    ("sandbox", "uid", "refused"),
    [("yes", 0, True), ("true", 0, True), ("1", 0, False), ("", 0, False), ("yes", 1000, False)],
)
def test_doctor_says_claude_will_not_start_as_root_outside_a_sandbox(
    clis: Path, tmp_path: Path, sandbox: str, uid: int, refused: bool
) -> None:
    spec = AGENTS["claude"]
    install(clis / spec.pinned_dir, spec.package, spec.version, spec.executable)
    environ = {"PATH": "", "ANTHROPIC_API_KEY": "k", "IS_SANDBOX": sandbox}
    claude = check_agents(tmp_path, home=tmp_path, environ=environ, uid=uid)[0]
    if not refused:
        assert claude.status == "ok"
        return
    assert (claude.status, claude.summary, claude.details[1:], claude.fix) == (
        "warn",
        f"Claude Code (claude-agent-acp) 0.101.0 will not start: root, IS_SANDBOX={sandbox!r}",
        (
            (
                "as root, Claude Code exits when it may skip permission checks (claude-code-acp "
                "allows that whenever IS_SANDBOX is set), unless IS_SANDBOX=1 says it runs in a "
                "sandbox"
            ),
        ),
        (
            "set IS_SANDBOX=1 (in a container or VM you trust), or unset IS_SANDBOX, or run as "
            "a user other than root"
        ),
    )


def test_cli_agent_names_are_the_library_ones_and_exclude_a_command() -> None:
    acp = main.commands["acp"]
    (option,) = [p for p in acp.params if p.name == "agent"]
    assert isinstance(option.type, click.Choice)
    assert tuple(option.type.choices) == tuple(AGENTS)
    runner = CliRunner()
    both = runner.invoke(main, ["acp", "--agent", "claude", "hi", "--", "x"])
    assert both.exit_code == 2
    assert "give --agent or COMMAND, not both" in both.output
    neither = runner.invoke(main, ["acp", "hi"])
    assert neither.exit_code == 2
    assert "give the agent's COMMAND (after --), or --agent NAME" in neither.output


def test_cli_agent_not_installed_exits_not_found(
    clis: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", os.defpath)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["acp", "--agent", "codex", "--json", "hi"])
    assert result.exit_code == EXIT_NOT_FOUND
    assert "Codex (codex-acp) not found" in result.output


def test_gemini_in_an_nvm_folder_is_found_newest_node_first_and_a_shim_runs_its_script(
    clis: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The spec's common locations are patterns (nvm's node versions), as find_gemini reads them;
    # an npm .cmd shim there runs as its node script, never through cmd.exe.
    nvm = tmp_path / "nvm"
    for version in ("v20.9.0", "v22.1.0"):
        launcher = nvm / version / "bin" / "gemini.cmd"
        launcher.parent.mkdir(parents=True)
        launcher.write_text('"%_prog%"  "%dp0%\\node_modules\\gemini\\index.js" %*\n')
        launcher.chmod(0o755)
        (launcher.parent / "node.exe").write_text("")
    spec = msgspec.structs.replace(
        AGENTS["gemini"], common_locations=(str(nvm / "*" / "bin" / "gemini.cmd"),)
    )
    monkeypatch.setitem(AGENTS, "gemini", spec)
    found = resolve_agent("gemini", cwd=str(tmp_path), environ={"PATH": ""})
    newest = nvm / "v22.1.0" / "bin"
    assert found.source == "common location"
    assert found.command == (
        str(newest / "node.exe"),
        str(newest / "node_modules" / "gemini" / "index.js"),
        "--acp",
    )
