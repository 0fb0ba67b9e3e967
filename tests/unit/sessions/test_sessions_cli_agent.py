"""`gemwire sessions list|show|export --agent`: whose sessions."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from click.testing import CliRunner

from gemwire.cli import main

Make = Callable[[str, str], Any]  # conftest.Materialized


def invoke(*args: str) -> tuple[int, str, str]:
    # Claude's home: none here (never the real one).
    result = CliRunner(env={"CLAUDE_CONFIG_DIR": "/nonexistent/.claude"}).invoke(
        main, ["sessions", *args]
    )
    return result.exit_code, result.stdout, result.stderr


def test_list_all_agents_names_the_agent_of_each_session(materialize: Make) -> None:
    run = materialize("0.61.0", "plain_answer")
    where = ("--gemini-home", str(run.home), "--project", str(run.workspace))
    code, plain, _ = invoke("list", *where)
    code_all, every, _ = invoke("list", *where, "--agent", "all")
    assert (code, code_all) == (0, 0)
    [line] = every.splitlines()
    assert line == "gemini  " + plain.rstrip("\n")
    code, out, _ = invoke("list", *where, "--agent", "all", "--json")
    assert [json.loads(line)["agent"] for line in out.splitlines()] == ["gemini"]


@pytest.mark.parametrize("agent", ["gemini", "all"])
def test_show_and_export_find_a_session_with_either_agent(materialize: Make, agent: str) -> None:
    run = materialize("0.61.0", "plain_answer")
    where = ("--gemini-home", str(run.home), "--project", str(run.workspace))
    code, default, _ = invoke("export", "latest", *where)
    code_agent, out, _ = invoke("export", "latest", *where, "--agent", agent)
    assert (code, code_agent) == (0, 0)
    assert out == default
    assert json.loads(out.splitlines()[0])["type"] == "session_started"
    code, out, err = invoke("show", "nonsense", *where, "--agent", agent)
    assert code == 1
    assert 'Invalid session identifier "nonsense"' in err
