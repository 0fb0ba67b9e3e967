"""The saved sessions of today's adapters, recorded from the real agents: codex-acp 2.6.0
(Codex 0.166 rollouts, tests/fixtures/codex/2.6.0) and claude-agent-acp 0.101.0 (Claude
Code 2.1.318 transcripts, tests/fixtures/claude/0.101.0).

Each case of test_agents_offline.py (and the two-prompt ``multi_turn``) runs live over ACP
through the adapter, in the mode that asks before acting (``TODAY[agent].mode``: both
adapters' defaults never ask); the session it saved is loaded, recorded with
``GEMWIRE_RECORD=1`` (machine paths replaced, its golden events beside it), and compared
with the live run as tests/saved_sessions.py compares the older pins' (`summary`), but for
what ``DIFFERENCES`` names.

The adapters are the pinned installs of those releases (`make agents`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from kit.saved_sessions import (
    JSONL,
    OFFLINE,
    PROMPTS,
    _record as record,
    summary,
)

from gemwire.events import Event, MessageDelta, UserMessage
from gemwire.runners.acp import AcpClient, AcpSession
from gemwire.runners.agents import AgentName, resolve_agent
from gemwire.sessions import ClaudeHome, CodexHome, SessionSource, load_session
from gemwire.testing import FunctionCall, Reply, Scenario, ScriptedModel, Text, Turn
from gemwire.testing.agents import isolated_agent

if TYPE_CHECKING:
    from kit.shared_agents import AgentPool, SharedAgent

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

Tools = OFFLINE.Tools  # the offline cases' dataclass, loaded by path
FIXTURES = Path(__file__).parents[2] / "fixtures"


@dataclass(frozen=True)
class Today:
    version: str
    mode: str
    """The adapter's mode that asks before acting."""
    modes: dict[str, str]
    """Another mode for a case."""
    saved_at: str
    """A glob, under the isolated home, of the one session file a run saves."""
    home: Callable[[Path], SessionSource]
    tools: Any
    """The agent's spelling of the calls (test_agents_offline.Tools)."""
    differences: dict[str, dict[str, str]]
    """Where saved and live differ by design: case -> field -> why (they must differ)."""
    unsteady: dict[str, dict[str, str]]
    """Where the live run itself varies from run to run: case -> field -> why (not compared)."""


def _patch(body: str) -> dict[str, str]:
    return {"input": f"*** Begin Patch\n{body}*** End Patch\n"}


_CANCEL = "the text streamed before the cancel is not saved"
_CODEX_READ = (
    "a command's kind: live, codex-acp parses the command (`cat a.txt`: read); the rollout "
    "keeps only the command (execute)"
)

TODAY = {
    "codex": Today(
        version="2.6.0",
        mode="read-only",
        # In read-only a command runs in Codex's sandbox without asking, and fails; with
        # workspace-write it runs (and asks for nothing either).
        modes={"shell": "workspace-write", "multi_turn": "workspace-write"},
        saved_at=".codex/sessions/*/*/*/rollout-*.jsonl",
        home=CodexHome,
        tools=OFFLINE.TOOLS["codex"],
        differences={
            "edit": {"calls": _CODEX_READ},
            "tool_error": {
                "calls": _CODEX_READ,
                "finished": "a patch that does not apply never becomes a call live; the "
                "rollout records the call, failed",
            },
            "cancel": {"answer": _CANCEL},
        },
        unsteady={
            "shell_denied": dict.fromkeys(
                ("calls", "finished"),
                "live, codex-acp 2.6.0 at times sends no tool call for a command its sandbox "
                "refused (3 runs in 10 here); the rollout always has it",
            )
        },
    ),
    "claude": Today(
        version="0.101.0",
        mode="default",
        modes={},
        saved_at=".claude/projects/*/*.jsonl",
        home=ClaudeHome,
        # Claude Code 2.1.318's own tools: the adapter no longer swaps in mcp__acp__ ones.
        tools=Tools(
            read=lambda w: FunctionCall("Read", {"file_path": str(w / "a.txt")}),
            write=lambda w: FunctionCall(
                "Write", {"file_path": str(w / "hello.txt"), "content": "hi there\n"}
            ),
            edit=lambda w: FunctionCall(
                "Edit", {"file_path": str(w / "a.txt"), "old_string": "old", "new_string": "new"}
            ),
            shell=lambda w: FunctionCall(
                "Bash", {"command": "touch made.txt", "description": "make a file"}
            ),
        ),
        # Claude Code 2.1.318 saves the text streamed before a cancel: nothing differs.
        differences={},
        unsteady={},
    ),
}

CODEX_CONFIG = """\
model = "gpt-5.5"
model_provider = "gemwire"
check_for_update_on_startup = false
sandbox_mode = "danger-full-access"

[model_providers.gemwire]
name = "gemwire scripted model"
base_url = "{url}"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false
"""
"""What Codex 0.166 accepts (no ``approval_policy = "untrusted"``), with a model in its
catalog."""

CASES = [*OFFLINE.PERMISSIONS, "multi_turn"]


def _command(agent: AgentName) -> tuple[str, ...]:
    """The pinned install of today's release (`make agents`)."""
    return resolve_agent(agent, version=TODAY[agent].version).command


def _scenario(
    agent: str, case: str, today: Today, workspace: Path
) -> tuple[Scenario, tuple[str, ...]]:
    if case == "multi_turn":
        turns: list[Turn] = [
            Reply([Text("First answer.")]),
            Reply([Text("On it."), today.tools.shell(workspace)]),
            Reply([Text("Done.")]),
        ]
        return Scenario(turns=turns, files=OFFLINE.SEED), PROMPTS
    script = OFFLINE.scenario(case, today.tools, workspace)
    return Scenario(turns=script.turns, files=script.files), ("go",)


QUIET = {"CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION": "false"}
"""After each turn claude-agent-acp asks the model for a prompt suggestion, a streamed
request the scripted model would serve from the script."""


async def _run(agent: AgentName, case: str, root: Path) -> list[Event]:
    """The case on an agent of its own (recording: the one session file under its home)."""
    today = TODAY[agent]
    command = _command(agent)
    script, prompts = _scenario(agent, case, today, root / "workspace")
    permissions = OFFLINE.PERMISSIONS.get(case, "all")
    with ScriptedModel(script) as model:
        env = isolated_agent(agent, model, files=script.files, root=root, command=command)
        if agent == "codex":
            (env.home / ".codex" / "config.toml").write_text(
                CODEX_CONFIG.format(url=model.openai_url)
            )
        with anyio.fail_after(240):
            options = env.acp_options(permissions=permissions, env=env.environ(QUIET))
            async with AcpClient(options) as client:
                session = await client.new_session()
                live = await _turns(session, agent, case, prompts)
        assert env.live_processes() == []
    assert model.problems == []
    return live


async def _turns(
    session: AcpSession, agent: AgentName, case: str, prompts: tuple[str, ...]
) -> list[Event]:
    """The case's prompts on ``session``, in the mode the case runs in."""
    today = TODAY[agent]
    await session.set_mode(today.modes.get(case, today.mode))
    live: list[Event] = []
    for prompt in prompts:
        async with session.prompt(prompt) as turn:
            async for event in turn:
                live.append(event)
                if case == "cancel" and isinstance(event, MessageDelta):
                    await turn.cancel()
    return live


async def _shared_turns(
    shared: SharedAgent, agent: AgentName, case: str, workspace: Path, prompts: tuple[str, ...]
) -> tuple[str, list[Event]]:
    with anyio.fail_after(240):
        session = await shared.session(workspace, OFFLINE.PERMISSIONS.get(case, "all"))
        return session.session_id, await _turns(session, agent, case, prompts)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The test's folder as the agents report it (symlinks resolved)."""
    return tmp_path.resolve()


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("agent", list(TODAY))
def test_todays_saved_session_agrees_with_the_live_run(
    agent: AgentName, case: str, root: Path, agent_pool: AgentPool
) -> None:
    """One agent process serves the module's cases of ``agent`` (conftest.py), each
    saving a session of its own under the shared home; recording, each case runs an agent
    of its own, whose home holds the one session it saved."""
    if OFFLINE.RECORD:
        live = anyio.run(_run, agent, case, root)
        [path] = (root / "home").glob(TODAY[agent].saved_at)
        _check(agent, case, root, live, path, root / "home")
        return
    workspace = root / "workspace"
    script, prompts = _scenario(agent, case, TODAY[agent], workspace)
    shared = agent_pool.get(agent, OFFLINE.PERMISSIONS.get(case, "all"), environ=QUIET)
    shared.play(script, workspace, script.files)
    session_id, live = shared.call(_shared_turns, shared, agent, case, workspace, prompts)
    assert shared.model.problems == []
    home = shared.env.home
    [path] = [p for p in home.glob(TODAY[agent].saved_at) if session_id in p.name]
    _check(agent, case, root, live, path, home)


def _check(agent: str, case: str, root: Path, live: list[Event], path: Path, home: Path) -> None:
    """The session the case saved (``path``, under ``home``), the first of its workspace's
    sessions ``home`` lists, agrees with the ``live`` run."""
    today = TODAY[agent]
    saved = list(load_session(path).events())
    if OFFLINE.RECORD:
        record(path, root, FIXTURES / agent / today.version / f"{case}.jsonl", JSONL)
    assert today.home(home).sessions(root / "workspace")[0].path == str(path)
    differ = today.differences.get(case, {})
    skip = differ | today.unsteady.get(case, {})
    ours, theirs = summary(saved), summary(live)
    assert {k: v for k, v in ours.items() if k not in skip} == {
        k: v for k, v in theirs.items() if k not in skip
    }
    assert all(ours[k] != theirs[k] for k in differ), ("listed as differing", ours, theirs)
    if case == "multi_turn":
        assert [e.text for e in saved if isinstance(e, UserMessage)] == list(PROMPTS)
    assert [e.type for e in saved].count("unknown") == 0
