"""Claude Code's subagents (``Task``): a real recording (claude-code-acp 0.16.2, Claude Code
2.1.44, against the scripted model: a ``Task`` call whose subagent answers "Sub done."), its
subagent's own file linked to the call that ran it, in events, listing, search and exports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from kit.corpus import FIXTURES
from msgspec import UNSET

from gemwire.cli import main
from gemwire.events import SessionStarted
from gemwire.protocol._strict import unknown_fields
from gemwire.sessions import (
    ClaudeHome,
    load_session,
    nested_claude_events,
    search,
    to_html,
    usage,
)
from gemwire.sessions.claude import ClaudeConversation, project_slug
from gemwire.wire.claude_session import Record

RECORDING = FIXTURES / "claude" / "0.16.2" / "subagent"
[_MAIN] = RECORDING.glob("*.jsonl")
SESSION = _MAIN.stem
[_SUB] = RECORDING.glob("*/subagents/agent-*.jsonl")
AGENT = _SUB.stem.removeprefix("agent-")
CALL = "toolu_gemwire_0_0"  # the scripted model's id for its first call


def _home(tmp_path: Path) -> tuple[ClaudeHome, Path, Path]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    folder = tmp_path / "home" / ".claude" / "projects" / project_slug(str(workspace))
    for recorded in RECORDING.rglob("*.jsonl"):
        made = folder / recorded.relative_to(RECORDING)
        made.parent.mkdir(parents=True, exist_ok=True)
        made.write_text(recorded.read_text().replace("__WORKSPACE__", str(workspace)))
    return ClaudeHome(tmp_path / "home"), workspace, folder


def test_the_wire_types_declare_every_recorded_field() -> None:
    for recorded in RECORDING.rglob("*.jsonl"):
        for line in recorded.read_bytes().splitlines():
            assert unknown_fields(json.loads(line), Record) == []


def test_the_subagent_follows_the_task_call_that_ran_it(tmp_path: Path) -> None:
    home, workspace, _ = _home(tmp_path)
    [info] = home.sessions(workspace)
    conversation = load_session(info.path)
    assert isinstance(conversation, ClaudeConversation)
    shown = [
        (e.type, e.session_id, e.parent_call_id if isinstance(e.parent_call_id, str) else None)
        for e in nested_claude_events(conversation)
    ]
    assert shown == [
        ("session_started", SESSION, None),
        ("user_message", SESSION, None),
        ("message_delta", SESSION, None),
        ("tool_call_started", SESSION, None),
        ("session_started", AGENT, CALL),
        ("user_message", AGENT, CALL),
        ("message_delta", AGENT, CALL),
        ("usage", AGENT, CALL),
        ("usage", SESSION, None),
        ("tool_call_finished", SESSION, None),
        ("message_delta", SESSION, None),
        ("usage", SESSION, None),
    ]
    assert [e.type for e in conversation.events()] == [
        t for t, sid, _ in shown if sid == SESSION
    ]  # no notice: the session's own file holds no sidechain record


def test_a_subagent_file_loaded_alone_names_its_call(tmp_path: Path) -> None:
    home, workspace, folder = _home(tmp_path)
    [info] = home.sessions(workspace)
    sub = folder / SESSION / "subagents" / f"agent-{AGENT}.jsonl"
    assert home.files(info) == [info.path, str(sub)]
    events = list(load_session(sub).events())
    assert [(e.type, e.session_id, e.parent_call_id) for e in events] == [
        ("session_started", AGENT, CALL),
        ("user_message", AGENT, CALL),
        ("message_delta", AGENT, CALL),
        ("usage", AGENT, CALL),
    ]
    assert isinstance(events[0], SessionStarted)
    assert events[0].cwd == str(workspace)
    # Its session's file gone: the subagent's events, unlinked.
    Path(info.path).unlink()
    assert {e.parent_call_id for e in load_session(sub).events()} == {UNSET}


@pytest.mark.parametrize("agent_id", ["../../../x", f"{AGENT}/../{AGENT}", ""])
def test_a_result_naming_another_file_links_nothing(tmp_path: Path, agent_id: str) -> None:
    _, _, folder = _home(tmp_path)
    main_file = folder / f"{SESSION}.jsonl"
    main_file.write_text(
        main_file.read_text().replace(
            f'"agentId":"{AGENT}"', json.dumps({"agentId": agent_id})[1:-1]
        )
    )
    conversation = load_session(main_file)
    assert isinstance(conversation, ClaudeConversation)
    assert all(not isinstance(e.parent_call_id, str) for e in nested_claude_events(conversation))


def test_search_finds_a_subagent_s_words_in_its_session(tmp_path: Path) -> None:
    home, _, _ = _home(tmp_path)
    [hit] = search("say sub done", home)
    assert (hit.id, hit.matches) == (SESSION, 2)  # the Task call's input, the subagent's prompt
    assert [q.field for q in hit.quotes] == ["tool input", "prompt"]


def test_show_and_the_page_nest_the_subagent(tmp_path: Path) -> None:
    home, workspace, _ = _home(tmp_path)
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "home" / ".claude")}
    result = CliRunner(env=env).invoke(
        main, ["sessions", "show", "latest", "--agent", "claude", "--project", str(workspace), "-q"]
    )
    assert result.exit_code == 0
    result = CliRunner(env=env).invoke(
        main, ["sessions", "show", "latest", "--agent", "claude", "--project", str(workspace)]
    )
    assert f"# subagent {AGENT} (call {CALL})" in result.stdout
    [info] = home.sessions(workspace)
    page = to_html(load_session(info.path))
    assert page.index("Delegating.") < page.index("say sub done") < page.index("Done.</")


def test_a_subagent_s_responses_count_towards_its_session(tmp_path: Path) -> None:
    home, _, _ = _home(tmp_path)
    report = usage(home, by="session")
    [row] = report.rows
    assert (row.key, row.requests, report.files) == (SESSION, 3, 2)
