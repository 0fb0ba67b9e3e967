"""What a batch's agent pool starts (Gemini CLI found as process mode finds it), what it
calls the agent, and how failures outside a turn are typed."""

from __future__ import annotations

from pathlib import Path

import pytest

from gemwire import GeminiOptions
from gemwire.batch import Task
from gemwire.batch._acp import AcpExecutor, _error_of, gemini_acp_options
from gemwire.errors import (
    AgentCrashed,
    AgentNotFound,
    AgentRequestFailed,
    GemwireError,
    RunTimedOut,
)
from gemwire.runners import find_gemini
from gemwire.runners.acp import AcpOptions, turn_error
from gemwire.runners.agents import agent_identity, resolve_agent


def test_gemini_agents_run_as_one_node_process() -> None:
    options = gemini_acp_options(GeminiOptions(env={"GEMINI_API_KEY": "k"}, gemini_home="/h"))
    assert options.command == ("gemini", "--acp")
    assert options.env == {
        "GEMINI_CLI_NO_RELAUNCH": "1",
        "GEMINI_API_KEY": "k",
        "GEMINI_CLI_HOME": "/h",
    }


def test_the_callers_environment_wins() -> None:
    options = gemini_acp_options(GeminiOptions(env={"GEMINI_CLI_NO_RELAUNCH": ""}))
    assert options.env == {"GEMINI_CLI_NO_RELAUNCH": ""}


def test_a_task_naming_gemini_gets_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMWIRE_AGENT_GEMINI", "my-gemini --acp")
    executor = AcpExecutor(
        AcpOptions(command=("other",), env={"X": "1"}),
        agent=None,
        agents=1,
        sessions_per_agent=10,
        concurrency=2,
    )
    pool = executor._pool("gemini")
    assert pool.options.command == ("my-gemini", "--acp")
    assert pool.options.env == {"GEMINI_CLI_NO_RELAUNCH": "1", "X": "1"}


def test_the_gemini_acp_options_carry_the_batch_timeout() -> None:
    assert gemini_acp_options(GeminiOptions(timeout=7.5)).timeout == 7.5


def test_the_default_gemini_is_found_as_process_mode_finds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gemini = tmp_path / "my-gemini"
    gemini.write_text("#!/bin/sh\n")
    gemini.chmod(0o755)
    monkeypatch.setenv("GEMINI_CLI_PATH", str(gemini))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    base = GeminiOptions()
    executor = AcpExecutor(
        gemini_acp_options(base),
        agent=None,
        agents=1,
        sessions_per_agent=1,
        concurrency=1,
        gemini=base,
    )
    assert executor._pool(None).options.command == (str(gemini), "--acp")
    # Named by its built-in identity, whatever its launcher is called.
    assert executor.agent_of(Task(prompt="p")) == "acp:gemini-cli"
    assert executor.agent_of(Task(prompt="p", agent="claude")) == (
        "acp:@agentclientprotocol/claude-agent-acp"
    )
    # `--agent gemini` looks at GEMINI_CLI_PATH too.
    assert resolve_agent("gemini", cwd=str(tmp_path)).command == (str(gemini), "--acp")
    assert resolve_agent("gemini", cwd=str(tmp_path)).source == "GEMINI_CLI_PATH"


def test_a_gemini_cli_path_that_is_not_executable_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_CLI_PATH", str(tmp_path / "none"))
    with pytest.raises(AgentNotFound, match=r"^GEMINI_CLI_PATH .*/none is not an executable file$"):
        resolve_agent("gemini", cwd=str(tmp_path))


@pytest.mark.parametrize(
    ("command", "reported", "identity"),
    [
        (("/opt/gemini", "--acp"), None, "acp:gemini-cli"),
        (("/opt/gemini", "--acp"), "gemini-cli", "acp:gemini-cli"),
        (("/x/node_modules/.bin/qwen", "--acp"), None, "acp:qwen-code"),
        (("opencode", "acp"), None, "acp:OpenCode"),
        (("npx", "some-agent"), None, "acp:npx"),
        (("npx", "some-agent"), "some-agent", "acp:some-agent"),
    ],
)
def test_one_agent_identity_before_and_after_initialize(
    command: tuple[str, ...], reported: str | None, identity: str
) -> None:
    assert agent_identity(command, reported) == identity


@pytest.mark.parametrize(
    ("exc", "kind", "message"),
    [
        (AgentRequestFailed("Resource has been exhausted", method="session/new", code=429),
         "rate_limited", "session/new: Resource has been exhausted"),
        (AgentRequestFailed("Authentication required", method="session/new", code=-32000),
         "auth", "session/new: Authentication required"),
        (AgentRequestFailed("boom", method="session/set_model", code=-32603),
         "agent", "session/set_model: boom"),
        (RunTimedOut("initialize: no answer in 300 s"), "timeout", "initialize: no answer in 300 s"),
        (AgentCrashed("the agent exited", exit_code=3), "crashed", "the agent exited"),
    ],
)  # fmt: skip
def test_failures_outside_a_turn_are_typed_as_a_turn_types_them(
    exc: GemwireError, kind: str, message: str
) -> None:
    error = _error_of(exc)
    assert (error.kind, error.message) == (kind, message)
    assert isinstance(exc, GemwireError)
    if isinstance(exc, AgentCrashed | RunTimedOut | AgentRequestFailed):
        assert error == turn_error(exc, getattr(exc, "method", ""))


def test_a_relative_executable_is_found_as_an_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Run as given, "g" would be looked up on $PATH: `batch --executable ./g` failed so.
    (tmp_path / "g").write_text("#!/bin/sh\n")
    (tmp_path / "g").chmod(0o755)
    monkeypatch.chdir(tmp_path)
    assert find_gemini("./g").path == str(tmp_path / "g")
