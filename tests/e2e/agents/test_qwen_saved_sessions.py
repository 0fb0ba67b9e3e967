"""Qwen Code's saved sessions, written by the real pinned Qwen Code 0.24.4 against the
scripted model (tests/fixtures/qwen/0.24.4), checked against the events the same run
streamed live over ACP (saved_sessions.py).

They agree in every case: the answer, the tool calls and their kinds, how each finished (a
denied call fails with the same refusal in both), the files changed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kit.corpus import FIXTURES
from kit.saved_sessions import CASES, check_multi_turn, check_saved_shared

from gemwire.sessions import QwenHome

if TYPE_CHECKING:
    from kit.shared_agents import AgentPool

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

SAVED_AT = ".qwen/projects/*/chats/*.jsonl"
RECORDINGS = FIXTURES / "qwen" / "0.24.4"


@pytest.mark.parametrize("case", CASES)
def test_saved_session_agrees_with_the_live_run(
    case: str, tmp_path: Path, agent_pool: AgentPool
) -> None:
    """The cases share one agent process (conftest.py), each saving a session of its own."""
    check_saved_shared(
        agent_pool,
        "qwen",
        case,
        tmp_path,
        saved_at=SAVED_AT,
        home=QwenHome,
        recordings=RECORDINGS,
    )


async def test_two_prompts_on_one_session_are_saved_as_one(tmp_path: Path) -> None:
    await check_multi_turn(
        "qwen", tmp_path, saved_at=SAVED_AT, home=QwenHome, recordings=RECORDINGS
    )
