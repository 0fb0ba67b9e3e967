"""Every built-in ACP agent, the real pinned one, offline against the scripted model.

Each case runs one scenario through one agent and compares the normalized events with
the golden file tests/fixtures/acp/<agent>/<case>.jsonl (machine paths and generated ids
replaced by placeholders, see `scrub_text`), then checks the files on disk. Re-record the
golden files with ``make record-agents`` (``GEMWIRE_RECORD=1``).

The scenarios are the same for every agent; only the tool calls are spelled in each
agent's own tools (`TOOLS`). Run one agent at a time: ``pytest tests/e2e/agents -k claude``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import msgspec
import pytest
from kit.corpus import AGENT_GOLDEN as GOLDEN

from gemwire.events import Event, MessageDelta, SessionUpdated, ToolCallFinished
from gemwire.runners.acp import AcpTurn, AcpTurnResult, PermissionPreset, run_acp
from gemwire.runners.agents import AgentName, resolve_agent
from gemwire.testing import FunctionCall, Hang, Reply, Scenario, ScriptedModel, Text, Thought
from gemwire.testing.agents import isolated_agent
from gemwire.testing.recorder import MachinePaths

if TYPE_CHECKING:
    from kit.shared_agents import AgentPool, SharedAgent

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

RECORD = os.environ.get("GEMWIRE_RECORD") == "1"
TAP = Path(__file__).with_name("frame_tap.py")

Call = Callable[[Path], FunctionCall]


@dataclass(frozen=True)
class Tools:
    """One agent's spelling of the calls the scenarios make (paths inside ``workspace``)."""

    write: Call  # hello.txt, "hi there\n"
    read: Call  # a.txt
    edit: Call  # a.txt: "old line" -> "new line"
    shell: Call  # touch made.txt


def _patch(body: str) -> dict[str, str]:
    return {"input": f"*** Begin Patch\n{body}*** End Patch\n"}


TOOLS: dict[AgentName, Tools] = {
    "claude": Tools(
        # With fs/read_text_file offered, claude-code-acp swaps its Read for this one.
        read=lambda w: FunctionCall("mcp__acp__Read", {"file_path": str(w / "a.txt")}),
        write=lambda w: FunctionCall(
            "mcp__acp__Write", {"file_path": str(w / "hello.txt"), "content": "hi there\n"}
        ),
        edit=lambda w: FunctionCall(
            "mcp__acp__Edit",
            {"file_path": str(w / "a.txt"), "old_string": "old", "new_string": "new"},
        ),
        shell=lambda w: FunctionCall(
            "Bash", {"command": "touch made.txt", "description": "make a file"}
        ),
    ),
    "codex": Tools(
        read=lambda w: FunctionCall("exec_command", {"cmd": "cat a.txt"}),
        write=lambda w: FunctionCall("apply_patch", _patch("*** Add File: hello.txt\n+hi there\n")),
        edit=lambda w: FunctionCall(
            "apply_patch", _patch("*** Update File: a.txt\n@@\n-old line\n+new line\n")
        ),
        shell=lambda w: FunctionCall("exec_command", {"cmd": "touch made.txt"}),
    ),
    "qwen": Tools(
        read=lambda w: FunctionCall("read_file", {"file_path": str(w / "a.txt")}),
        write=lambda w: FunctionCall(
            "write_file", {"file_path": str(w / "hello.txt"), "content": "hi there\n"}
        ),
        edit=lambda w: FunctionCall(
            "edit", {"file_path": str(w / "a.txt"), "old_string": "old", "new_string": "new"}
        ),
        shell=lambda w: FunctionCall(
            "run_shell_command", {"command": "touch made.txt", "description": "make a file"}
        ),
    ),
    "opencode": Tools(
        read=lambda w: FunctionCall("read", {"filePath": str(w / "a.txt")}),
        write=lambda w: FunctionCall(
            "write", {"filePath": str(w / "hello.txt"), "content": "hi there\n"}
        ),
        edit=lambda w: FunctionCall(
            "edit", {"filePath": str(w / "a.txt"), "oldString": "old", "newString": "new"}
        ),
        shell=lambda w: FunctionCall(
            "bash", {"command": "touch made.txt", "description": "make a file"}
        ),
    ),
    "gemini": Tools(
        read=lambda w: FunctionCall("read_file", {"file_path": "a.txt"}),
        write=lambda w: FunctionCall(
            "write_file", {"file_path": "hello.txt", "content": "hi there\n"}
        ),
        edit=lambda w: FunctionCall(
            "replace",
            {"file_path": "a.txt", "instruction": "i", "old_string": "old", "new_string": "new"},
        ),
        shell=lambda w: FunctionCall("run_shell_command", {"command": "touch made.txt"}),
    ),
}

AGENT_NAMES = tuple(TOOLS)
GOLDEN_VERSIONS: dict[AgentName, str] = {"claude": "0.16.2", "codex": "0.16.0"}
"""The release these golden files were recorded from, where it is no longer the current one
(test_deny_holds.py covers every pinned release)."""
SEED = {"a.txt": "old line\n"}
NO_MATCH = {"a.txt": "nothing to replace\n"}


def scenario(case: str, tools: Tools, workspace: Path) -> Scenario:
    """The scripted model's side of each case."""
    if case == "answer":
        return Scenario(
            turns=[Reply([Thought("Let me think."), Text("Hello "), Text("there.")])],
            files=SEED,
        )
    if case == "cancel":
        return Scenario(turns=[Reply([Text("Working on it"), Hang()])], files=SEED)
    if case in ("edit", "tool_error"):  # some agents refuse to edit a file not read first
        return Scenario(
            turns=[
                Reply([Text("On it."), tools.read(workspace)]),
                Reply([tools.edit(workspace)]),
                Reply([Text("Done.")]),
            ],
            # tool_error: the text to replace is not in the file, so the edit fails
            files=SEED if case == "edit" else NO_MATCH,
        )
    call = {
        "write": tools.write,
        "write_denied": tools.write,
        "shell": tools.shell,
        "shell_denied": tools.shell,
    }[case](workspace)
    return Scenario(turns=[Reply([Text("On it."), call]), Reply([Text("Done.")])], files=SEED)


PERMISSIONS: dict[str, PermissionPreset] = {
    "answer": "deny",
    "cancel": "deny",
    "write": "edits",
    "write_denied": "deny",
    "edit": "edits",
    "tool_error": "edits",
    "shell": "all",
    "shell_denied": "deny",
}

# What each case leaves in the workspace.
FILES_AFTER = {
    "answer": SEED,
    "cancel": SEED,
    "write": {**SEED, "hello.txt": "hi there\n"},
    "write_denied": SEED,
    "edit": {"a.txt": "new line\n"},
    "tool_error": NO_MATCH,
    "shell": {**SEED, "made.txt": ""},
    "shell_denied": SEED,
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The test's folder as the agents report it (symlinks resolved)."""
    return tmp_path.resolve()


async def run_case(
    agent: AgentName, case: str, root: Path
) -> tuple[list[Event], AcpTurnResult, Path, ScriptedModel]:
    """Run ``case`` on an agent of its own, in ``root`` (the saved-session tests read the
    one session it saved, tests/kit/saved_sessions.py); recording, behind the frame tap."""
    workspace = root / "workspace"
    script = scenario(case, TOOLS[agent], workspace)
    tapped = root / "frames"
    # Recording: the frames go through frame_tap.py, which copies them into `tapped`.
    version = GOLDEN_VERSIONS.get(agent)
    tap = (sys.executable, str(TAP), str(tapped), *resolve_agent(agent, version=version).command)
    with ScriptedModel(script) as model:
        env = isolated_agent(
            agent,
            model,
            files=script.files,
            root=root,
            command=tap if RECORD else None,
            version=version,
        )
        with anyio.fail_after(150):
            async with run_acp("go", env.acp_options(permissions=PERMISSIONS[case])) as turn:
                events = [event async for event in until_cancelled(turn, case)]
        assert env.live_processes() == []
    assert model.problems == []
    if RECORD:
        frames = scrub_text(tapped.read_text(), root)
        (GOLDEN / agent).mkdir(parents=True, exist_ok=True)
        (GOLDEN / agent / f"{case}.frames").write_text(frames)
    return events, turn.result, workspace, model


def run_shared_case(
    shared: SharedAgent, tools: Tools, case: str, root: Path
) -> tuple[list[Event], AcpTurnResult, Path]:
    """Run ``case`` (its calls spelled in ``tools``) on the module's ``shared`` agent: a
    session of its own, in ``root``/workspace, the model playing the case's scenario."""
    workspace = root / "workspace"
    script = scenario(case, tools, workspace)
    shared.play(script, workspace, script.files)
    events, result = shared.call(shared_turn, shared, case, workspace)
    assert shared.model.problems == []
    return events, result, workspace


async def shared_turn(
    shared: SharedAgent, case: str, workspace: Path
) -> tuple[list[Event], AcpTurnResult]:
    with anyio.fail_after(150):
        session = await shared.session(workspace, PERMISSIONS[case])
        async with session.prompt("go") as turn:
            events = [event async for event in until_cancelled(turn, case)]
    return events, turn.result


async def until_cancelled(turn: AcpTurn, case: str) -> AsyncIterator[Event]:
    """The turn's events; in case ``cancel``, the turn is cancelled at its first text."""
    async for event in turn:
        yield event
        if case == "cancel" and isinstance(event, MessageDelta) and event.text:
            await turn.cancel()


def scrub(events: list[Event], *roots: Path) -> list[dict[str, Any]]:
    """The events as golden JSON: no ``session_updated`` (their timing against the rest
    varies run to run), paths under each of ``roots`` (the case's, the shared agent's home)
    under ``{root}``, generated ids and clocks replaced."""
    text = json.dumps([msgspec.to_builtins(e) for e in events if not isinstance(e, SessionUpdated)])
    return json.loads(scrub_text(text, *roots))  # type: ignore[no-any-return]


MACHINE = MachinePaths()


def scrub_text(text: str, *roots: Path) -> str:
    """``text`` with paths under each of ``roots`` as ``{root}``, this machine's other paths
    (the pinned agents' own files, ...: `MachinePaths`), generated ids and clocks replaced."""
    text = MACHINE.scrub(text, lambda name: f"{{{name}}}", [(str(r), "{root}") for r in roots])
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "{uuid}", text)
    text = re.sub(r"ses_[0-9A-Za-z]{26}", "{uuid}", text)  # OpenCode's session ids
    text = re.sub(r"(?<!\d)\d{13}(?!\d)", "0", text)  # millisecond clocks: Gemini's call ids, Codex
    text = re.sub(
        r'((?:process_id|secs|nanos|duration_ms|durationMs)\\?"\s*:\s*\\?"?)\d+', r"\g<1>0", text
    )
    return re.sub(r"PGID: \d+", "PGID: 0", text)  # Qwen Code's shell output


def check_golden(agent: str, case: str, events: list[dict[str, Any]]) -> None:
    path = GOLDEN / agent / f"{case}.jsonl"
    if RECORD:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(e, sort_keys=True) + "\n" for e in events))
        return
    assert path.exists(), f"no golden file {path}: make record-agents"
    golden = [json.loads(line) for line in path.read_text().splitlines()]
    # Recorded from a process of its own, and a session on a shared process gets the same:
    # every session opened hears the agent's login status (`SessionRouter`).
    assert numbered_requests(events) == numbered_requests(golden)


def numbered_requests(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``events`` with each agent request's JSON-RPC id replaced by its order among the
    case's requests: the agent numbers the requests of its whole process, and a shared
    one has made others before the case's (a permission's request and answer must still
    name the same one)."""
    order: dict[str, str] = {}
    return [
        {**e, "request_id": order.setdefault(e["request_id"], str(len(order)))}
        if "request_id" in e
        else e
        for e in events
    ]


def files_in(workspace: Path) -> dict[str, str]:
    return {
        p.relative_to(workspace).as_posix(): p.read_text()
        for p in sorted(workspace.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


@pytest.mark.parametrize("case", list(PERMISSIONS))
@pytest.mark.parametrize("agent", AGENT_NAMES)
def test_agent_case(agent: AgentName, case: str, root: Path, agent_pool: AgentPool) -> None:
    """One agent process serves the module's cases of ``agent``, a session each
    (conftest.py); recording, each case runs an agent of its own behind the frame tap."""
    if RECORD:
        events, result, workspace, _ = anyio.run(run_case, agent, case, root)
        roots = [root]
    else:
        shared = agent_pool.get(agent, PERMISSIONS[case], GOLDEN_VERSIONS.get(agent))
        events, result, workspace = run_shared_case(shared, TOOLS[agent], case, root)
        roots = [root, shared.root]
    check_golden(agent, case, scrub(events, *roots))
    assert files_in(workspace) == FILES_AFTER[case]
    types = [e.type for e in events]
    assert types.count("turn_completed") == 1
    assert types[-1] == "turn_completed"
    if case.endswith("_denied"):
        assert types.count("permission_requested") == types.count("permission_resolved") == 1
    if case == "cancel":
        assert (result.stop_reason, result.answer) == ("cancelled", "Working on it")
    if case == "tool_error":
        statuses = [e.status for e in events if isinstance(e, ToolCallFinished)]
        # Codex checks a patch before it runs it: one that does not apply never becomes a
        # tool call, the model alone hears of it.
        assert statuses == (["completed"] if agent == "codex" else ["completed", "failed"])
    if case in ("write", "edit", "shell"):
        assert result.ok, result
        assert result.answer.endswith("Done.")


async def test_claude_reads_through_the_client_even_when_not_offered(root: Path) -> None:
    """Why `AgentSpec.serve_reads` is on for Claude: without fs/read_text_file its Edit fails."""
    workspace = root / "workspace"
    script = Scenario(
        turns=[Reply([TOOLS["claude"].edit(workspace)]), Reply([Text("Done.")])], files=SEED
    )
    with ScriptedModel(script) as model:
        env = isolated_agent("claude", model, files=SEED, root=root, version="0.16.2")
        options = env.acp_options(permissions="edits", serve_reads=False)
        with anyio.fail_after(150):
            async with run_acp("go", options) as turn:
                events = [event async for event in turn]
    finished = [e for e in events if e.type == "tool_call_finished"]
    refused = '{"code":-32601,"message":"this client does not offer fs/read_text_file"}'
    assert [(e.status, e.output) for e in finished] == [  # type: ignore[union-attr]
        ("failed", f"```\nEditing file failed: {refused}\n```")
    ]
    assert files_in(workspace) == SEED


def test_gemwire_acp_runs_a_built_in_agent_by_name(root: Path) -> None:
    gemwire = Path(sys.executable).with_name("gemwire")
    with ScriptedModel(Scenario(turns=[Reply([Text("Hi from Claude.")])])) as model:
        env = isolated_agent("claude", model, root=root)
        argv = [str(gemwire), "acp", "--agent", "claude", "--json", "go"]
        argv += ["--cwd", str(env.workspace)]
        done = subprocess.run(
            argv, check=False, env=env.environ(), capture_output=True, timeout=150
        )
        assert env.live_processes() == []
    assert done.returncode == 0, done.stderr
    last = json.loads(done.stdout.splitlines()[-1])
    assert (last["type"], last["ok"], last["answer"]) == ("turn_completed", True, "Hi from Claude.")
    assert last["agent"] == "acp:@agentclientprotocol/claude-agent-acp"
