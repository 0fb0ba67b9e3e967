"""Sessions by agent: the registry of sources, and which source a file handed in belongs to."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from kit.corpus import FIXTURES
from kit.opencode_db import build

from gemwire.cli.sessions import AGENT_CHOICES
from gemwire.errors import InvalidOptions
from gemwire.sessions import (
    AGENT_NAMES,
    AGENTS,
    AntigravityHome,
    ClaudeHome,
    CodexHome,
    GeminiHome,
    OpenCodeHome,
    QwenHome,
    SessionInfo,
    SessionSource,
    load_session,
    nested_claude_events,
    nested_events,
    nested_opencode_events,
    source,
    sources,
)

Make = Callable[[str, str], Any]  # conftest.Materialized


def test_every_agent_has_a_source(tmp_path: Path) -> None:
    home: SessionSource = GeminiHome(tmp_path)  # mypy checks GeminiHome against the protocol
    assert home.agent == "gemini"
    assert isinstance(source("gemini", tmp_path), GeminiHome)
    assert source("gemini", tmp_path).home == tmp_path
    assert [type(s) for s in sources("all", tmp_path)] == [
        GeminiHome,
        ClaudeHome,
        CodexHome,
        QwenHome,
        OpenCodeHome,
        AntigravityHome,
    ]
    assert [s.agent for s in sources("all", tmp_path)] == list(AGENTS)
    assert sources("claude", home) == [home]  # a source handed in is used as it is


def test_an_unknown_agent_is_refused_with_the_choices() -> None:
    with pytest.raises(InvalidOptions) as caught:
        source("aider")
    assert str(caught.value) == (
        "unknown agent 'aider': one of gemini, claude, codex, qwen, opencode, antigravity, or all"
    )


@pytest.mark.parametrize(
    ("head", "gemini"),
    [
        (b'{"sessionId":"a","projectHash":"b"}\n', True),
        (b'{\n  "sessionId": "a",\n', True),
        (b'  {"sessionId":"a"}', True),
        # Claude Code's records carry a sessionId too, but never first.
        (b'{"parentUuid":null,"isSidechain":false,"sessionId":"a"}\n', False),
        (b'{"type":"session_meta"}\n', False),
        (b"", False),
    ],
)
def test_gemini_recognises_its_first_record(head: bytes, gemini: bool) -> None:
    assert GeminiHome("/nonexistent").recognises(head) is gemini


def test_a_file_is_loaded_by_the_source_that_recognises_it(materialize: Make) -> None:
    run = materialize("0.61.0", "plain_answer")
    [path] = run.session_files()
    conversation = load_session(path)
    assert conversation.session_id is not None
    assert conversation.problems == []


def test_a_file_no_source_recognises_is_gemini_s_to_report(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_bytes(b'{"hello":1}\n')
    conversation = load_session(path)
    assert conversation.session_id is None
    assert [p.message for p in conversation.problems] == [
        p.message for p in GeminiHome(tmp_path).load(path).problems
    ]
    assert conversation.problems != []


def test_every_listed_session_names_its_agent(materialize: Make) -> None:
    run = materialize("0.61.0", "session_subagent")
    [info] = GeminiHome(run.home).sessions(run.workspace)
    assert info.agent == "gemini"
    assert [sub.agent for sub in info.subagents] == ["gemini"] * len(info.subagents)
    assert GeminiHome(run.home).files(info) == [info.path, *(s.path for s in info.subagents)]


def test_an_index_written_before_summaries_named_their_agent_still_reads() -> None:
    # The listing index stores SessionInfo as it is: an older entry has no "agent".
    old = {
        "id": "s",
        "path": "/p",
        "project": None,
        "format": "jsonl",
        "kind": "main",
        "start_time": None,
        "last_updated": None,
        "summary": None,
        "first_prompt": None,
        "messages": 1,
        "resumable": True,
    }
    info = msgspec.msgpack.decode(msgspec.msgpack.encode(old), type=SessionInfo)
    assert info.agent == "gemini"


def test_the_registry_is_the_one_list_of_agents(tmp_path: Path) -> None:
    """What is said of every agent comes from its source, by way of the registry: the
    agents and their names, ``--agent``'s choices (sessions, usage), a loaded session's
    agent; so a new agent is its source and one entry in the registry."""
    made = sources("all", tmp_path)
    assert tuple(s.agent for s in made) == AGENTS
    assert {s.agent: s.name for s in made} == AGENT_NAMES
    assert AGENT_CHOICES.choices == (*AGENTS, "all")
    for each in made:
        assert source(each.agent, tmp_path).agent == each.agent
        kind = getattr(each, "kind", None)  # a source of JSON lines: its files' agent
        assert kind is None or kind.format.agent == each.agent


def test_nested_events_nest_any_agent_s_subagents(tmp_path: Path) -> None:
    """`nested_events` takes any agent's loaded session to its source: Claude Code's
    ``Task`` files and OpenCode's ``task`` sessions follow their call, recorded."""
    recordings = FIXTURES / "claude" / "0.16.2" / "subagent"
    [main] = recordings.glob("*.jsonl")
    claude = load_session(main)
    assert list(nested_events(claude)) == list(nested_claude_events(claude))  # type: ignore[arg-type]
    assert any(e.parent_call_id for e in nested_events(claude))
    database = build(
        (FIXTURES / "opencode" / "1.18.33" / "subagent.sql").read_text(), tmp_path / "oc.db"
    )
    opencode = load_session(database)
    nested = list(nested_events(opencode))
    assert nested == list(nested_opencode_events(opencode))  # type: ignore[arg-type]
    assert any(e.parent_call_id for e in nested)
    codex = load_session(FIXTURES / "codex" / "0.16.0" / "answer.jsonl")
    assert list(nested_events(codex)) == list(codex.events())
