"""``--permissions deny`` leaves the workspace byte for byte as it was, for every pinned
agent and version: the real agent, offline against the scripted model.

The model tries to write a file, edit one and run a command that makes one, each in a
session of its own on one agent process (cheap: one start per agent). Whatever the agent's
own default mode (claude-agent-acp's ``auto`` and codex-acp 2.6's ``agent`` never ask),
gemwire makes it ask (`gemwire.runners.acp.asking`), so each attempt is asked and denied,
and the workspace's snapshot (every file and folder, hidden ones too, and their bytes) is
the same after as before. The same holds through ``gemwire serve`` and ``gemwire batch
--agent``, for the agents whose default mode never asks.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from kit.serve_process import Server, event, sse

from gemwire.events import Event, PermissionRequested, ToolCallFinished
from gemwire.runners.acp import AcpClient
from gemwire.runners.agents import AGENTS, AgentName
from gemwire.testing import Fail, FunctionCall, Reply, Scenario, ScriptedModel, Text
from gemwire.testing.agents import isolated_agent

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

SEED = {"a.txt": "old line\n", "sub/b.txt": "keep\n"}
Call = Callable[[Path], FunctionCall]


def _patch(body: str) -> dict[str, str]:
    return {"input": f"*** Begin Patch\n{body}*** End Patch\n"}


def _claude(read: str, write: str, edit: str) -> dict[str, Call]:
    return {
        "read": lambda w: FunctionCall(read, {"file_path": str(w / "a.txt")}),
        "write": lambda w: FunctionCall(
            write, {"file_path": str(w / "hello.txt"), "content": "hi there\n"}
        ),
        "edit": lambda w: FunctionCall(
            edit, {"file_path": str(w / "a.txt"), "old_string": "old", "new_string": "new"}
        ),
        "run": lambda w: FunctionCall(
            "Bash", {"command": "touch made.txt", "description": "make a file"}
        ),
    }


_CODEX: dict[str, Call] = {
    "write": lambda w: FunctionCall("apply_patch", _patch("*** Add File: hello.txt\n+hi there\n")),
    "edit": lambda w: FunctionCall(
        "apply_patch", _patch("*** Update File: a.txt\n@@\n-old line\n+new line\n")
    ),
    "run": lambda w: FunctionCall("exec_command", {"cmd": "touch made.txt"}),
}

TOOLS: dict[tuple[AgentName, str], dict[str, Call]] = {
    # claude-agent-acp uses Claude Code's own tools; claude-code-acp its mcp__acp__ ones
    # (with fs/read_text_file offered).
    ("claude", "0.101.0"): _claude("Read", "Write", "Edit"),
    ("claude", "0.16.2"): _claude("mcp__acp__Read", "mcp__acp__Write", "mcp__acp__Edit"),
    ("codex", "2.6.0"): _CODEX,
    ("codex", "0.16.0"): _CODEX,
    ("qwen", "0.24.4"): {
        "read": lambda w: FunctionCall("read_file", {"file_path": str(w / "a.txt")}),
        "write": lambda w: FunctionCall(
            "write_file", {"file_path": str(w / "hello.txt"), "content": "hi there\n"}
        ),
        "edit": lambda w: FunctionCall(
            "edit", {"file_path": str(w / "a.txt"), "old_string": "old", "new_string": "new"}
        ),
        "run": lambda w: FunctionCall(
            "run_shell_command", {"command": "touch made.txt", "description": "make a file"}
        ),
    },
    ("opencode", "1.18.33"): {
        "read": lambda w: FunctionCall("read", {"filePath": str(w / "a.txt")}),
        "write": lambda w: FunctionCall(
            "write", {"filePath": str(w / "hello.txt"), "content": "hi there\n"}
        ),
        "edit": lambda w: FunctionCall(
            "edit", {"filePath": str(w / "a.txt"), "oldString": "old", "newString": "new"}
        ),
        "run": lambda w: FunctionCall(
            "bash", {"command": "touch made.txt", "description": "make a file"}
        ),
    },
    ("gemini", "0.61.0"): {
        "read": lambda w: FunctionCall("read_file", {"file_path": "a.txt"}),
        "write": lambda w: FunctionCall(
            "write_file", {"file_path": "hello.txt", "content": "hi there\n"}
        ),
        "edit": lambda w: FunctionCall(
            "replace",
            {"file_path": "a.txt", "instruction": "i", "old_string": "old", "new_string": "new"},
        ),
        "run": lambda w: FunctionCall("run_shell_command", {"command": "touch made.txt"}),
    },
}

PINNED = [
    (spec.name, release.version)
    for spec in AGENTS.values()
    for release in spec.releases
    # gemwire's own adapter, which asks for every call in its default mode: a denial leaving
    # the workspace as it was is tests/e2e/agents/test_antigravity.py's.
    if spec.name != "antigravity"
]
NEVER_ASK_BY_DEFAULT = [("claude", "0.101.0"), ("codex", "2.6.0")]
ATTEMPTS = ("write", "edit", "run")
UNREPORTED = {("codex", "2.6.0"): {"run"}}
"""Attempts an agent may stop without a word to the client: codex-acp 2.6.0 sometimes sends
no tool call for a command its read-only sandbox refused (its rollout has the call; the
workspace is checked all the same)."""
BATCH_ENDS: dict[str, dict[str, str | None]] = {
    "claude": dict.fromkeys(ATTEMPTS),
    # codex-acp 2.6 ends a turn whose call was denied as cancelled; its sandbox lets the
    # command fail instead, and the turn goes on.
    "codex": {"write": "cancelled", "edit": "cancelled", "run": None},
}
"""How each task ends (its error kind, ``None``: ok)."""


def test_every_pinned_release_is_covered() -> None:
    assert sorted(TOOLS) == sorted(PINNED)


def scenario(agent: AgentName, version: str, workspace: Path) -> Scenario:
    """Per attempt, turns only its own session's prompt (``task <attempt>``) can take: an
    agent that ends its turn at a denial leaves the rest to no other session."""
    tools = TOOLS[(agent, version)]
    turns: list[Reply | Fail] = []
    for attempt in ATTEMPTS:
        when = f"task {attempt}"
        if attempt == "edit" and "read" in tools:  # Claude Code edits only a file it read
            turns.append(Reply([tools["read"](workspace)], when=when))
        turns.append(Reply([Text("On it."), tools[attempt](workspace)], when=when))
        turns.append(Reply([Text("Done.")], when=when))
    return Scenario(turns=turns, files=SEED)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The test's folder as the agents report it (symlinks resolved)."""
    return tmp_path.resolve()


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (``None``) under ``folder``, hidden ones too."""
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else None)
        for p in sorted(folder.rglob("*"))
    }


def refusals(events: list[Event]) -> list[str]:
    """How a turn's attempt was stopped: ``asked`` for each permission request (denied),
    ``failed`` for each call the agent itself refused (codex-acp 2.6's read-only sandbox
    runs a command and lets it fail, without asking)."""
    found = ["asked" for e in events if isinstance(e, PermissionRequested)]
    return found + [
        "failed" for e in events if isinstance(e, ToolCallFinished) and e.status == "failed"
    ]


@pytest.mark.parametrize(("agent", "version"), PINNED)
async def test_deny_leaves_the_workspace_unchanged(
    agent: AgentName, version: str, root: Path
) -> None:
    workspace = root / "workspace"
    script = scenario(agent, version, workspace)
    with ScriptedModel(script) as model:
        env = isolated_agent(agent, model, files=SEED, root=root, version=version)
        before = snapshot(workspace)
        outcomes: dict[str, list[str]] = {}
        with anyio.fail_after(240):
            async with AcpClient(env.acp_options(permissions="deny")) as client:
                for attempt in ATTEMPTS:
                    session = await client.new_session()
                    async with session.prompt(f"task {attempt}") as turn:
                        events = [e async for e in turn]
                    outcomes[attempt] = refusals(events)
        assert env.live_processes() == []
    assert snapshot(workspace) == before
    unreported = UNREPORTED.get((agent, version), set())
    assert all(said for attempt, said in outcomes.items() if attempt not in unreported), outcomes
    assert model.problems == []


@pytest.mark.parametrize(("agent", "version"), NEVER_ASK_BY_DEFAULT)
async def test_deny_holds_through_serve(agent: AgentName, version: str, root: Path) -> None:
    workspace = root / "workspace"
    script = scenario(agent, version, workspace)
    with ScriptedModel(script) as model:
        env = isolated_agent(agent, model, files=SEED, root=root, version=version)
        before = snapshot(workspace)
        server = Server(env, root / "state")
        try:
            with anyio.fail_after(240):
                for attempt in ATTEMPTS:
                    body = {"agent": agent, "permissions": "deny"}
                    created = await server.post("/v1/sessions", body)
                    assert created.status_code == 201, created.text
                    sid = created.json()["id"]
                    async with sse(server, f"/v1/sessions/{sid}/events") as stream:
                        prompted = await server.post(
                            f"/v1/sessions/{sid}/prompt", {"text": f"task {attempt}"}
                        )
                        assert prompted.status_code == 202, prompted.text
                        done = (await stream.until(event("turn_completed")))["event"]
                    assert done["agent"] == f"acp:{AGENTS[agent].release(version).reported_name}"
                code, stderr = await server.stop()
            assert code == 0, stderr
            assert env.live_processes() == []
        finally:
            await server.close()
    assert snapshot(workspace) == before
    assert model.problems == []


@pytest.mark.parametrize(("agent", "version"), NEVER_ASK_BY_DEFAULT)
def test_deny_holds_through_batch(agent: AgentName, version: str, root: Path) -> None:
    workspace = root / "workspace"
    script = scenario(agent, version, workspace)
    tasks = root / "tasks.jsonl"
    lines = [
        {"id": attempt, "prompt": f"task {attempt}", "workspace": "workspace"}
        for attempt in ATTEMPTS
    ]
    with ScriptedModel(script) as model:
        env = isolated_agent(agent, model, files=SEED, root=root, version=version)
        tasks.write_text("".join(json.dumps(line) + "\n" for line in lines))
        before = snapshot(workspace)
        gemwire = Path(sys.executable).with_name("gemwire")
        argv = [str(gemwire), "batch", str(tasks), "--out", str(root / "out"), "--agent", agent]
        done = subprocess.run(
            argv, check=False, env=env.environ(), capture_output=True, text=True, timeout=240
        )
        assert env.live_processes() == []
    assert snapshot(workspace) == before
    results = [
        json.loads(line) for line in (root / "out" / "results.jsonl").read_text().splitlines()
    ]
    ended = {r["task_id"]: (r["error"] or {}).get("kind") for r in results}
    assert ended == BATCH_ENDS[agent]
    assert done.returncode == (1 if any(ended.values()) else 0), done.stderr
    for attempt in set(ATTEMPTS) - UNREPORTED.get((agent, version), set()):
        events = (root / "out" / "events" / f"{attempt}.jsonl").read_text().splitlines()
        types = [json.loads(line)["type"] for line in events]
        assert "permission_requested" in types or "tool_call_finished" in types, types
    assert model.problems == []
