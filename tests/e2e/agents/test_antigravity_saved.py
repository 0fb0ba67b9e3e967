"""Antigravity's saved conversations, from the real harness (google-antigravity 0.1.22)
through ``gemwire agent antigravity`` against the scripted model: what ``gemwire sessions``
and ``gemwire usage`` read back is what the live run streamed.

One adapter process runs every case, each a session in a workspace of its own (the scripted
model's answers are picked by the case's prompt). Each case's store (its transcript and its
database) is recorded into tests/fixtures/antigravity/0.1.22/<case>/home with its golden
events (``GEMWIRE_RECORD=1``); tests/unit/sessions/test_antigravity_sessions.py replays them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import msgspec
import pytest
from click.testing import CliRunner
from kit.antigravity_store import record_store
from kit.saved_sessions import scrub, summary

from gemwire.cli import main
from gemwire.events import (
    Event,
    MessageDelta,
    ThoughtDelta,
    TokenUsage,
    TurnCompleted,
    UsageReported,
    UserMessage,
)
from gemwire.runners.acp import AcpClient
from gemwire.runners.acp.permissions import PermissionRequest
from gemwire.sessions import AntigravityHome, load_session
from gemwire.testing import FunctionCall, Hang, Reply, Scenario, ScriptedModel, Text, Thought, Turn
from gemwire.testing.agents import IsolatedAntigravity

pytest.importorskip("google.antigravity", reason="make test installs gemwire[antigravity]")

pytestmark = [pytest.mark.e2e]

RECORD = os.environ.get("GEMWIRE_RECORD") == "1"
RECORDINGS = Path(__file__).parents[2] / "fixtures" / "antigravity" / "0.1.22"
SAYS = {"toolSummary": "a step", "toolAction": "Working"}
SEED = {"a.txt": "old line\n"}

PROMPTS = {
    "multi_turn": ("case-multi", "and again"),
    "denied": ("case-deny",),
    "cancel": ("case-cancel", "and now?"),
}
"""Each case's prompts, one after the other on one session."""


def _write(w: Path, name: str) -> FunctionCall:
    args = {"TargetFile": str(w / name), "CodeContent": "hi there\n", "Overwrite": False}
    return FunctionCall("write_to_file", {**args, "Description": "a greeting", **SAYS})


def _edit(w: Path) -> FunctionCall:
    args = {"TargetFile": str(w / "a.txt"), "TargetContent": "old", "ReplacementContent": "new"}
    lines = {"StartLine": 1, "EndLine": 1, "AllowMultiple": False}
    return FunctionCall(
        "replace_file_content", {**args, **lines, "Instruction": "i", "Description": "d", **SAYS}
    )


def _shell(w: Path) -> FunctionCall:
    args = {"CommandLine": "touch made.txt", "Cwd": str(w), "WaitMsBeforeAsync": 5000}
    return FunctionCall("run_command", {**args, **SAYS})


def _turns(root: Path) -> list[Turn]:
    multi, denied = root / "multi_turn", root / "denied"
    return [
        Reply([Thought("Let me think."), Text("First answer.")], when="case-multi"),
        Reply([_write(multi, "hello.txt")], when="case-multi"),
        Reply([_edit(multi)], when="case-multi"),
        Reply([_shell(multi)], when="case-multi"),
        Reply([Text("Done.")], when="case-multi"),
        Reply([_write(denied, "nope.txt")], when="case-deny"),
        Reply([Text("Not written.")], when="case-deny"),
        Reply([Text("Working on it"), Hang()], when="case-cancel"),
        Reply([Text("Back.")], when="case-cancel"),
    ]


async def _permit(request: PermissionRequest) -> str:
    return "reject_once" if "nope.txt" in request.title else "allow_once"


@dataclass
class Run:
    root: Path
    env: IsolatedAntigravity
    live: dict[str, list[Event]]
    sessions: dict[str, str]


async def _run_cases(root: Path, env: IsolatedAntigravity) -> Run:
    run = Run(root, env, {}, {})
    with anyio.fail_after(240):
        await _cases(run, env)
    return run


async def _cases(run: Run, env: IsolatedAntigravity) -> None:
    root = run.root
    async with AcpClient(env.acp_options(), permission_handler=_permit) as client:
        for case, prompts in PROMPTS.items():
            workspace = root / case
            workspace.mkdir()
            (workspace / "a.txt").write_text(SEED["a.txt"])
            session = await client.new_session(cwd=str(workspace))
            run.sessions[case] = session.session_id
            events = run.live.setdefault(case, [])
            for prompt in prompts:
                async with session.prompt(prompt) as turn:
                    async for event in turn:
                        events.append(event)
                        if case == "cancel" and isinstance(event, MessageDelta):
                            await turn.cancel()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    root = tmp_path_factory.mktemp("antigravity-saved").resolve()
    with ScriptedModel(Scenario(turns=_turns(root))) as model:
        env = IsolatedAntigravity(model, root=root / "env")
        done = anyio.run(_run_cases, root, env, backend="asyncio")
        assert env.live_processes() == []
    assert model.problems == []
    return done


def _said(events: list[Event]) -> dict[str, object]:
    """What a person saw of a conversation: the summary of tests/kit/saved_sessions.py, the
    prompts and the thoughts."""
    return {
        **summary(events),
        "prompts": [e.text for e in events if isinstance(e, UserMessage)],
        "thoughts": [e.text for e in events if isinstance(e, ThoughtDelta)],
    }


def _tokens(usages: Sequence[TokenUsage | None]) -> tuple[int, int, int, list[str]]:
    spent = [u for u in usages if u is not None]
    return (
        sum(u.input_tokens for u in spent),
        sum(u.output_tokens for u in spent),
        sum(u.total_tokens for u in spent),
        sorted({m for u in spent for m in u.by_model}),
    )


@pytest.mark.parametrize("case", list(PROMPTS))
def test_the_saved_conversation_is_the_live_one(run: Run, case: str) -> None:
    workspace = run.root / case
    home = AntigravityHome(run.env.home)
    [info] = home.sessions(workspace)
    assert (info.id, info.project, info.first_prompt) == (
        run.sessions[case],
        str(workspace),
        PROMPTS[case][0],
    )
    loaded = load_session(info.path)  # told apart from the other agents' files by its start
    saved = list(loaded.events())
    live = run.live[case]
    assert _said(saved) == _said(live)
    # Usage: the live turns' totals are the saved calls' added up, on the same model.
    live_usage = [e.usage for e in live if isinstance(e, TurnCompleted)]
    saved_usage = [e.usage for e in saved if isinstance(e, UsageReported)]
    assert _tokens(saved_usage) == _tokens(live_usage)
    assert _tokens(saved_usage)[3] == ["gemini-3.8-flash"]
    if RECORD:
        into = RECORDINGS / case / "home" / ".gemini" / "antigravity"
        app_data = run.env.home / ".gemini" / "antigravity"
        record_store(app_data, run.sessions[case], into, lambda text: scrub(text, run.root))
        recorded = AntigravityHome(into.parents[1]).all_sessions()
        events = [msgspec.to_builtins(e) for e in load_session(recorded[0].path).events()]
        (RECORDINGS / f"{case}.events.jsonl").write_text(
            "".join(json.dumps(e, sort_keys=True) + "\n" for e in events)
        )


def test_gemwire_sessions_and_usage_read_them(run: Run) -> None:
    """The CLI, its home found as the adapter's harness finds it (``HOME``): every case
    listed, one shown as it was, the usage of all, a search."""
    runner = CliRunner(env={"HOME": str(run.env.home)})

    def gemwire(*argv: str) -> str:
        done = runner.invoke(main, list(argv))
        assert done.exit_code == 0, done.output
        return done.stdout

    listed = [json.loads(line) for line in gemwire(
        "sessions", "list", "--agent", "antigravity", "--all-projects", "--json"
    ).splitlines()]  # fmt: skip
    assert sorted((s["id"], s["project"]) for s in listed) == sorted(
        (run.sessions[case], str(run.root / case)) for case in PROMPTS
    )
    multi = run.root / "multi_turn"
    shown = gemwire(
        "sessions", "show", run.sessions["multi_turn"], "--agent", "antigravity",
        "--project", str(multi), "--json",
    )  # fmt: skip
    events = [json.loads(line) for line in shown.splitlines()]
    live = [json.loads(msgspec.json.encode(e)) for e in run.live["multi_turn"]]
    answers = [e["text"] for e in events if e["type"] == "message_delta"]
    assert answers == [e["text"] for e in live if e["type"] == "message_delta"]
    usage = json.loads(gemwire("usage", "--agent", "antigravity", "--by", "model", "--json"))
    [row] = usage["rows"]
    turns = [e.usage for case in PROMPTS for e in run.live[case] if isinstance(e, TurnCompleted)]
    total = _tokens(turns)
    assert (row["key"], row["input_tokens"], row["output_tokens"], row["total_tokens"]) == (
        "gemini-3.8-flash",
        *total[:3],
    )
    assert (row["cost_usd"], row["unpriced_models"]) == (None, ["gemini-3.8-flash"])
    assert usage["sessions"] == len(PROMPTS)
    found = gemwire("sessions", "search", "Not written", "--agent", "antigravity", "--json")
    assert [json.loads(line)["id"] for line in found.splitlines()] == [run.sessions["denied"]]
