"""Claude Code's session file holds a turn once the turn has ended, while the agent still
runs: gemwire starts it with ``CLAUDE_CODE_EAGER_FLUSH=1`` (docs/agents.md). Without it the
file is written on a 100 ms timer after the turn's end, and an agent stopped at once on a
loaded machine lost the turn (the saved-vs-live check of test_claude_saved_sessions.py
failed under load)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from gemwire.events import MessageDelta, UserMessage
from gemwire.runners.acp import AcpClient
from gemwire.sessions import load_session
from gemwire.testing import Reply, Scenario, ScriptedModel, Text
from gemwire.testing.agents import isolated_agent

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The folder as the agent reports it (symlinks resolved)."""
    return tmp_path.resolve()


async def test_the_turn_is_saved_when_it_ends(root: Path) -> None:
    script = Scenario(turns=[Reply([Text("First answer.")]), Reply([Text("Second answer.")])])
    with ScriptedModel(script) as model:
        env = isolated_agent("claude", model, root=root)
        with anyio.fail_after(120):
            async with AcpClient(env.acp_options()) as client:
                session = await client.new_session()
                for prompt, answer in (("one", "First answer."), ("two", "Second answer.")):
                    async with session.prompt(prompt) as turn:
                        await turn.wait()
                    assert turn.result.ok, turn.result
                    # The agent still runs: what its file holds now is what it saved.
                    [path] = (root / "home").glob(".claude/projects/*/*.jsonl")
                    saved = list(load_session(path).events())
                    assert [e.text for e in saved if isinstance(e, UserMessage)][-1] == prompt
                    said = "".join(e.text for e in saved if isinstance(e, MessageDelta))
                    assert said.endswith(answer)
        assert env.live_processes() == []
    assert model.problems == []
