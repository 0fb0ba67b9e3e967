"""Which agents the server offers, and how it would start them (no process started)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gemwire.server.agents import ProcessLauncher
from gemwire.server.responses import NotFound


def test_the_agents_are_listed_built_ins_first_with_secrets_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMWIRE_CLIS_DIR", str(tmp_path))  # no pinned agents
    environ = {
        "PATH": str(tmp_path),
        "GEMWIRE_AGENT_CLAUDE": "claude-acp --key sk-0123456789abcdef",
        "ANTHROPIC_API_KEY": "sk-0123456789abcdef",
    }
    launcher = ProcessLauncher({"mine": ("my-agent", "--acp")}, environ=environ)
    agents = launcher.agents()
    assert [(a.name, a.transport) for a in agents] == [
        ("gemini", "acp"),
        ("gemini-stream", "stream-json"),
        ("claude", "acp"),
        ("codex", "acp"),
        ("qwen", "acp"),
        ("opencode", "acp"),
        ("mine", "acp"),
    ]
    assert (agents[0].available, agents[1].available) == (False, False)  # no Gemini CLI
    claude = agents[2]
    assert (claude.available, claude.command) == (True, ["claude-acp", "--key", "***"])
    assert agents[3].available is False
    assert agents[3].detail is not None
    assert agents[3].detail.startswith("Codex (codex-acp) not found")


def test_an_agent_never_gets_the_servers_token(tmp_path: Path) -> None:
    environ = {"GEMWIRE_TOKEN": "secret-token", "GEMWIRE_AGENT_QWEN": "qwen --acp", "X": "1"}
    launcher = ProcessLauncher({"mine": ("my-agent",)}, environ=environ)
    for name in ("qwen", "mine"):
        options = launcher.options(name, str(tmp_path))
        assert "GEMWIRE_TOKEN" not in options.environment()
        assert (options.inherit_env, options.env["X"], options.cwd) == (False, "1", str(tmp_path))
    assert launcher.options("mine", str(tmp_path)).command == ("my-agent",)


def test_an_unknown_or_missing_agent_is_not_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMWIRE_CLIS_DIR", str(tmp_path))  # no pinned agents
    launcher = ProcessLauncher(environ={"PATH": str(tmp_path)})
    with pytest.raises(NotFound, match=r"^unknown agent 'nope'; known: gemini, claude"):
        launcher.options("nope", str(tmp_path))
    with pytest.raises(NotFound, match=r"^gemini-stream is not an ACP agent \(use gemini\)$"):
        launcher.options("gemini-stream", str(tmp_path))
    with pytest.raises(NotFound, match=r"^OpenCode not found"):
        launcher.options("opencode", str(tmp_path))
