"""Claude Code's saved sessions, written by the real pinned claude-code-acp 0.16.2 against
the scripted model (tests/fixtures/claude/0.16.2), checked against the events the same run
streamed live over ACP (saved_sessions.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus import FIXTURES
from saved_sessions import CASES, check_saved

from gemwire.sessions import ClaudeHome

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

# The live run and its saved session differ here, by design of each (docs/sessions.md).
DIFFERENCES = {
    # A denied call never finishes live (the turn ends); the session records its refusal.
    "write_denied": "the denied call: live, never finished; saved, failed with the refusal",
    "shell_denied": "the denied call: live, never finished; saved, failed with the refusal",
    # A cancel ends the turn live; the session records only the prompt and the interruption.
    "cancel": "the streamed text before the cancel is not saved",
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The test's folder as the agents report it (symlinks resolved)."""
    return tmp_path.resolve()


@pytest.mark.parametrize("case", CASES)
async def test_saved_session_agrees_with_the_live_run(case: str, root: Path) -> None:
    await check_saved(
        "claude",
        case,
        root,
        saved_at=".claude/projects/*/*.jsonl",
        home=ClaudeHome,
        recordings=FIXTURES / "claude" / "0.16.2",
        differences=DIFFERENCES,
    )
