"""Codex's saved sessions, written by the real pinned codex-acp 0.16.0 (Codex 0.137.0)
against the scripted model (tests/fixtures/codex/0.16.0), checked against the events the
same run streamed live over ACP (saved_sessions.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus import FIXTURES
from saved_sessions import CASES, check_saved

from gemwire.sessions import CodexHome

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

_READ = (
    "a command's kind: live, codex-acp parses the command (`cat a.txt`: read); the rollout "
    "keeps only the command (execute)"
)
# The live run and its saved session differ here, by design of each (docs/sessions.md).
DIFFERENCES = {
    "edit": {"calls": _READ},
    "tool_error": {
        "calls": _READ + "; a patch that does not apply never becomes a call live, the "
        "rollout records the call",
        "finished": "the rollout's patch call fails (live: no call)",
    },
    "cancel": {"answer": "the text streamed before the cancel is not saved"},
}


@pytest.mark.parametrize("case", CASES)
async def test_saved_session_agrees_with_the_live_run(case: str, tmp_path: Path) -> None:
    await check_saved(
        "codex",
        case,
        tmp_path,
        saved_at=".codex/sessions/*/*/*/rollout-*.jsonl",
        home=CodexHome,
        recordings=FIXTURES / "codex" / "0.16.0",
        differences=DIFFERENCES,
    )
