"""`gemwire sessions list|show|export --agent`: whose sessions."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gemwire.cli import main
from gemwire.sessions import load_prices

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


def _two_agents(materialize: Make, tmp_path: Path) -> tuple[dict[str, str], list[str]]:
    """A project with Gemini's recorded session and every Claude Code recording: the
    environment to find both, and ``--project``."""
    from kit.jsonl_agents import JSONL_AGENTS, materialize as materialize_jsonl

    run = materialize("0.61.0", "plain_answer")
    claude = next(spec for spec in JSONL_AGENTS if spec.agent == "claude")  # 0.16.2
    materialize_jsonl(claude, tmp_path / "claude", run.workspace)
    env = {
        "GEMINI_CLI_HOME": str(run.home),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude" / ".claude"),
        "CODEX_HOME": str(tmp_path / "none"),
        "QWEN_HOME": str(tmp_path / "none"),
        "QWEN_RUNTIME_DIR": "",
        "XDG_DATA_HOME": str(tmp_path / "none"),
        "OPENCODE_DB": "",
    }
    return env, ["--agent", "all", "--project", str(run.workspace)]


def test_a_number_two_agents_answer_to_is_an_error_naming_both(
    materialize: Make, tmp_path: Path
) -> None:
    env, where = _two_agents(materialize, tmp_path)
    runner = CliRunner(env=env)
    listed = runner.invoke(main, ["sessions", "list", *where, "--json"])
    ones = [json.loads(line) for line in listed.stdout.splitlines()]
    ones = [(s["agent"], s["id"]) for s in ones if s["index"] == 1]
    assert [agent for agent, _ in ones] == ["gemini", "claude"]
    for command in ("show", "export"):
        result = runner.invoke(main, ["sessions", command, "1", *where])
        assert result.exit_code == 2
        named = ", ".join(f"{agent}'s {sid}" for agent, sid in ones)
        assert result.stderr == (
            f"Error: 1 names a session of more than one agent ({named}): add --agent\n"
        )
    one = runner.invoke(main, ["sessions", "show", "1", *where[2:], "--agent", "claude"])
    assert one.exit_code == 0, one.stderr


def test_latest_of_every_agent_is_the_session_updated_last(
    materialize: Make, tmp_path: Path
) -> None:
    env, where = _two_agents(materialize, tmp_path)
    runner = CliRunner(env=env)
    listed = runner.invoke(main, ["sessions", "list", *where, "--json"])
    every = [json.loads(line) for line in listed.stdout.splitlines()]
    newest = max(every, key=lambda s: s["last_updated"])
    assert newest["agent"] == "claude"  # its multi_turn recording is the newest
    shown = runner.invoke(main, ["sessions", "show", "latest", *where, "--json"])
    assert shown.exit_code == 0, shown.stderr
    assert json.loads(shown.stdout.splitlines()[0])["session_id"] == newest["id"]


@pytest.mark.parametrize("inside", [True, False])
def test_a_fifo_is_refused_as_not_a_regular_file(tmp_path: Path, inside: bool) -> None:
    """As docs/sessions.md says of a hostile home: not "no session file"."""
    folder = tmp_path / ".claude" / "projects" / "-w" if inside else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    fifo = folder / "s.jsonl"
    os.mkfifo(fifo)
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / ".claude"), "GEMINI_CLI_HOME": str(tmp_path)}
    for command in ("show", "export"):
        result = CliRunner(env=env).invoke(
            main, ["sessions", command, str(fifo), "--agent", "claude"]
        )
        assert result.exit_code == 1
        name = "Claude Code" if inside else "Gemini"  # outside a home: by its format
        assert result.stderr == (
            f"Error: {fifo} is not a {name} session: not a regular file (a FIFO): not read\n"
        )


def test_usage_names_the_dated_page_of_every_price_it_used(
    materialize: Make, tmp_path: Path
) -> None:
    """Gemini's model priced from a user's table, Claude Code's from Anthropic's page (its
    own date): the footer named the table's date and page alone."""
    prices = tmp_path / "prices.toml"
    prices.write_text('as_of = "2026-11-01"\n[models."gemini-3.8-flash"]\ninput = 1\noutput = 2\n')
    env, _ = _two_agents(materialize, tmp_path)
    runner = CliRunner(env={**env, "COLUMNS": "400"})
    where = ["usage", "--agent", "all", "--prices", str(prices)]
    report = json.loads(runner.invoke(main, [*where, "--json"]).stdout)
    claude = load_prices().price("claude-sonnet-4-5-20250929")
    assert claude is not None
    assert report["price_sources"] == [
        {
            "as_of": "2026-11-01",
            "source": report["prices_source"],
            "models": ["gemini-3.8-flash"],
        },
        {
            "as_of": claude.as_of,
            "source": claude.source,
            "models": ["claude-sonnet-4-5-20250929"],
        },
    ]
    text = runner.invoke(main, where).stdout
    footer = [line for line in text.splitlines() if line.startswith("Prices as of")]
    assert footer == [
        f"Prices as of 2026-11-01: {report['prices_source']} (gemini-3.8-flash).",
        f"Prices as of {claude.as_of}: {claude.source} (claude-sonnet-4-5-20250929).",
    ]
