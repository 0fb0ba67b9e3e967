"""OpenCode's saved sessions, written into its database by the real pinned OpenCode 1.18.33
against the scripted model (tests/fixtures/opencode/1.18.33, as SQL), checked against the
events the same run streamed live over ACP (saved_sessions.py; what differs:
saved_differences.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kit.corpus import FIXTURES
from kit.opencode_db import build, dump
from kit.saved_sessions import CASES, Recording, check_multi_turn, check_saved_shared

from gemwire.sessions import OpenCodeHome

if TYPE_CHECKING:
    from kit.shared_agents import AgentPool

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

SAVED_AT = ".local/share/opencode/opencode.db"
RECORDINGS = FIXTURES / "opencode" / "1.18.33"

SQL = Recording(
    ".sql", dump, lambda recorded, scratch: build(recorded.read_text(), scratch / "opencode.db")
)


@pytest.mark.parametrize("case", CASES)
def test_saved_session_agrees_with_the_live_run(
    case: str, tmp_path: Path, agent_pool: AgentPool
) -> None:
    """The cases share one agent process (conftest.py), each saving a session of its own."""
    check_saved_shared(
        agent_pool,
        "opencode",
        case,
        tmp_path,
        saved_at=SAVED_AT,
        home=OpenCodeHome,
        recordings=RECORDINGS,
        recording=SQL,
    )


async def test_two_prompts_on_one_session_are_saved_as_one(tmp_path: Path) -> None:
    await check_multi_turn(
        "opencode",
        tmp_path,
        saved_at=SAVED_AT,
        home=OpenCodeHome,
        recordings=RECORDINGS,
        recording=SQL,
    )
