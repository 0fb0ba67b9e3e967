"""Claude Code's saved sessions, written by the real pinned claude-code-acp 0.16.2 against
the scripted model (tests/fixtures/claude/0.16.2), checked against the events the same run
streamed live over ACP (saved_sessions.py; what differs: saved_differences.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kit.corpus import FIXTURES
from kit.saved_sessions import CASES, check_multi_turn, check_saved_shared

from gemwire.sessions import ClaudeHome

if TYPE_CHECKING:
    from kit.shared_agents import AgentPool

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

SAVED_AT = ".claude/projects/*/*.jsonl"
RECORDINGS = FIXTURES / "claude" / "0.16.2"


@pytest.mark.parametrize("case", CASES)
def test_saved_session_agrees_with_the_live_run(
    case: str, tmp_path: Path, agent_pool: AgentPool
) -> None:
    """The cases share one agent process (conftest.py), each saving a session of its own."""
    check_saved_shared(
        agent_pool,
        "claude",
        case,
        tmp_path,
        saved_at=SAVED_AT,
        home=ClaudeHome,
        recordings=RECORDINGS,
    )


async def test_two_prompts_on_one_session_are_saved_as_one(tmp_path: Path) -> None:
    await check_multi_turn(
        "claude", tmp_path, saved_at=SAVED_AT, home=ClaudeHome, recordings=RECORDINGS
    )
