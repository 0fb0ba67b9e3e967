"""Two things Antigravity's harness does beside a plain turn, through ``gemwire agent
antigravity`` against the scripted model (google-antigravity 0.1.22), with its network tools
on (the model's own calls are scripted: nothing leaves loopback):

- its web search (``search_web``) asks the model a side question of its own, a
  ``generateContent`` with ``googleSearch``: the scripted model answers it as a side call,
  never with a scripted turn, and lists it in ``requests``;
- a shell command that outlives ``WaitMsBeforeAsync`` goes on in the background: the model
  answers meanwhile, the call finishes when the command does, and the harness tells the
  model, whose answer ends the turn.

One adapter runs both, each a session of its own (its prompt picks its answers).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import anyio
import msgspec
import pytest
from kit.saved_sessions import summary

from gemwire.events import (
    Event,
    MessageDelta,
    PermissionRequested,
    SessionUpdated,
    ToolCallFinished,
)
from gemwire.runners.acp import AcpClient
from gemwire.runners.acp.permissions import PermissionRequest
from gemwire.sessions import AntigravityHome, load_session
from gemwire.testing import FunctionCall, Reply, Scenario, ScriptedModel, Text
from gemwire.testing.agents import IsolatedAntigravity
from gemwire.testing.model_server import RecordedRequest

pytest.importorskip("google.antigravity", reason="make test installs gemwire[antigravity]")

pytestmark = [pytest.mark.e2e]

SAYS = {"toolSummary": "a step", "toolAction": "Working"}
WAITING = "until [ -e go.txt ]; do sleep 0.02; done; touch late.txt"
"""A command that runs until the test lets it end (no race with the wall clock)."""


def _turns(root: Path) -> list[Reply]:
    search = FunctionCall("search_web", {"query": "gemwire news", **SAYS})
    background = FunctionCall(
        "run_command",
        {"CommandLine": WAITING, "Cwd": str(root / "background"), "WaitMsBeforeAsync": 100} | SAYS,
    )
    return [
        Reply([search], when="case-search"),
        Reply([Text("Found it.")], when="case-search"),
        Reply([background], when="case-background"),
        Reply([Text("Started.")], when="case-background"),
        Reply([Text("It ended.")], when="case-background"),
    ]


@dataclass
class Run:
    root: Path
    home: Path
    requests: list[RecordedRequest] = field(default_factory=list)
    live: dict[str, list[Event]] = field(default_factory=dict)
    asked: list[PermissionRequest] = field(default_factory=list)
    sessions: dict[str, str] = field(default_factory=dict)
    before_go: list[str] = field(default_factory=list)
    """The workspace's files when the model's first answer came (the command still ran)."""


async def _cases(run: Run, env: IsolatedAntigravity) -> None:
    async def permit(request: PermissionRequest) -> str:
        run.asked.append(request)
        return "allow_once"

    environ = env.environ() | {"GEMWIRE_ANTIGRAVITY_NETWORK_TOOLS": "1"}
    async with AcpClient(env.acp_options(env=environ), permission_handler=permit) as client:
        for case in ("search", "background"):
            workspace = run.root / case
            workspace.mkdir()
            session = await client.new_session(cwd=str(workspace))
            run.sessions[case] = session.session_id
            events = run.live.setdefault(case, [])
            async with session.prompt(f"case-{case}") as turn:
                async for event in turn:
                    events.append(event)
                    if isinstance(event, MessageDelta) and event.text == "Started.":
                        run.before_go = sorted(p.name for p in workspace.iterdir())
                        (workspace / "go.txt").touch()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    root = tmp_path_factory.mktemp("antigravity-background").resolve()
    with ScriptedModel(Scenario(turns=list(_turns(root)))) as model:
        env = IsolatedAntigravity(model, root=root / "env")
        done = Run(root, env.home)

        async def main() -> None:
            with anyio.fail_after(120):
                await _cases(done, env)

        anyio.run(main, backend="asyncio")
        assert env.live_processes() == []
        done.requests = list(model.requests)
    assert model.problems == []
    return done


def _seen(events: list[Event]) -> list[dict[str, object]]:
    """Each event but ``session_updated`` (its timing against the rest varies), without the
    agent and session (the same on every one)."""
    seen = []
    for event in events:
        if isinstance(event, SessionUpdated):
            continue
        data = msgspec.to_builtins(event)
        for key in ("agent", "session_id"):
            data.pop(key, None)
        seen.append(data)
    return seen


def _requests_of(run: Run, prompt: str) -> list[RecordedRequest]:
    return [r for r in run.requests if prompt in msgspec.json.encode(r.body).decode()]


def test_the_web_search_side_call_is_answered_without_a_turn(run: Run) -> None:
    turns = [r.turn for r in run.requests if r.turn is not None]
    side = [r for r in run.requests if r.turn is None]
    assert [r.rpc for r in side] == ["generateContent"]
    [search] = side
    assert search.path == "/v1beta/models/gemini-3.8-flash:generateContent"
    assert search.body["tools"] == [{"googleSearch": {}}]
    assert search.body["contents"] == [{"parts": [{"text": "gemwire news"}], "role": "user"}]
    # Every scripted turn went to a turn: two for the search, three for the background case.
    assert sorted(turns) == [0, 1, 2, 3, 4]
    assert [r.rpc for r in _requests_of(run, "case-search")] == ["streamGenerateContent"] * 2
    kinds = [(e["type"], e.get("status"), e.get("kind")) for e in _seen(run.live["search"])]
    assert kinds == [
        ("session_started", None, None),
        ("user_message", None, None),
        ("tool_call_started", None, "fetch"),
        ("permission_requested", None, "fetch"),
        ("permission_resolved", None, None),
        ("tool_call_updated", "in_progress", None),
        ("tool_call_finished", "completed", None),
        ("message_delta", None, None),
        ("usage", None, None),
        ("turn_completed", None, None),
    ]
    [finished] = [e for e in run.live["search"] if isinstance(e, ToolCallFinished)]
    assert '"query":"gemwire news"' in str(finished.output)


def test_a_background_command_ends_the_turn_when_it_ends(run: Run) -> None:
    workspace = run.root / "background"
    assert run.before_go == []  # the model answered while the command still waited
    assert sorted(p.name for p in workspace.iterdir()) == ["go.txt", "late.txt"]
    [asked] = [a for a in run.asked if a.kind == "execute"]
    assert asked.title == WAITING
    seen = _seen(run.live["background"])
    usage = {
        "input_tokens": 300,
        "output_tokens": 30,
        "cached_tokens": 0,
        "total_tokens": 330,
        "by_model": {
            "gemini-3.8-flash": {
                "input_tokens": 300,
                "output_tokens": 30,
                "cached_tokens": 0,
                "total_tokens": 330,
            }
        },
        "context_tokens": 110,
        "context_window": 1048576,
    }
    output = {
        "command_line": WAITING,
        "working_dir": str(workspace),
        "exit_code": 0,
        "combined_output": "",
    }
    assert seen[0]["type"] == "session_started"
    assert seen[1:] == [
        {"type": "user_message", "text": "case-background"},
        {
            "type": "tool_call_started",
            "call_id": "call-1",
            "name": "run_command",
            "kind": "execute",
            "title": WAITING,
            "input": {"CommandLine": WAITING, "Cwd": str(workspace), "WaitMsBeforeAsync": 100},
            "locations": [],
            "mcp_server": None,
            "mcp_tool": None,
        },
        {**_permission(seen[3]), "type": "permission_requested"},
        {"type": "permission_resolved", **_resolved(seen[4])},
        {"type": "tool_call_updated", "call_id": "call-1", "status": "in_progress"}
        | _rest(seen[5]),
        {"type": "message_delta", "text": "Started."},
        {
            "type": "tool_call_finished",
            "call_id": "call-1",
            "status": "completed",
            "output": msgspec.json.encode(output).decode(),
            "error": None,
            "diff": None,
        },
        {"type": "message_delta", "text": "It ended."},
        {"type": "usage", "usage": usage},
        {
            "type": "turn_completed",
            "ok": True,
            "stop_reason": "end_turn",
            "answer": "Started.It ended.",
            "usage": usage,
            "duration_ms": seen[-1]["duration_ms"],
        }
        | _rest(seen[-1], "duration_ms"),
    ]
    # The harness told the model the command ended, and its answer ended the turn.
    last = msgspec.json.encode(_requests_of(run, "case-background")[-1].body).decode()
    assert "finished with result" in last


def _permission(event: dict[str, object]) -> dict[str, object]:
    assert event["call_id"] == "call-1"
    assert event["kind"] == "execute"
    assert event["title"] == WAITING
    assert [o["option_id"] for o in event["options"]] == [  # type: ignore[attr-defined]
        "allow_once",
        "allow_always",
        "reject_once",
    ]
    return event


def _resolved(event: dict[str, object]) -> dict[str, object]:
    assert (event["call_id"], event["option_id"]) == ("call-1", "allow_once")
    return {k: v for k, v in event.items() if k != "type"}


def _rest(event: dict[str, object], *skip: str) -> dict[str, object]:
    """Fields the expected dict does not name: only empty ones may remain."""
    known = {"type", "call_id", "status", "ok", "stop_reason", "answer", "usage", *skip}
    rest = {k: v for k, v in event.items() if k not in known}
    assert all(v in (None, [], {}, "") for v in rest.values()), rest
    return rest


def test_both_read_back_from_the_saved_conversations_as_they_ran(run: Run) -> None:
    home = AntigravityHome(run.home)
    for case in ("search", "background"):
        [info] = home.sessions(run.root / case)
        saved = list(load_session(info.path).events())
        assert summary(saved) == summary(run.live[case])
    assert [e for e in run.live["search"] if isinstance(e, PermissionRequested)] != []
