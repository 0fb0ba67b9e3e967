"""What a batch's agent pool starts Gemini CLI with."""

from __future__ import annotations

import pytest

from gemwire import GeminiOptions
from gemwire.batch._acp import AcpExecutor, gemini_acp_options
from gemwire.runners.acp import AcpOptions


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
