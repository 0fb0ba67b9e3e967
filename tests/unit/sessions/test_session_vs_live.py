"""Each recorded run: the events of its saved session agree with the events of its live stream.

Same prompts, same tool calls (ids, names, kinds from the one allowlist), same changed files,
same answer text. The session file holds more (thoughts, usage per message, diffs): that is
checked separately in test_session_events.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kit.corpus import RECORDINGS, normalize_stream

from gemwire.events import (
    Event,
    FileChanged,
    MessageDelta,
    ToolCallStarted,
    TurnCompleted,
    UserMessage,
)
from gemwire.sessions import GeminiHome, load_session

# <version>/<case>/stream-json/gemini-home/tmp/<project>/chats/session-*
RECORDED = sorted(
    {p.parents[5] for p in RECORDINGS.glob("*/*/stream-json/gemini-home/tmp/*/chats/session-*")}
)


def facts(events: list[Event]) -> dict[str, object]:
    return {
        "prompts": [e.text.strip() for e in events if isinstance(e, UserMessage)],
        "calls": [(e.call_id, e.name, e.kind) for e in events if isinstance(e, ToolCallStarted)],
        "files": sorted({e.path for e in events if isinstance(e, FileChanged)}),
        "text": "".join(e.text for e in events if isinstance(e, MessageDelta)),
    }


@pytest.mark.parametrize("case", RECORDED, ids=lambda p: f"{p.parts[-2]}/{p.name}")
def test_saved_session_agrees_with_the_live_stream(
    case: Path,
    materialize: Callable[[str, str], Any],  # conftest.Materialized
) -> None:
    run = materialize(case.parent.name, case.name)
    cwd = str(run.workspace)
    live = [e for out in run.stdouts for e in normalize_stream(out, cwd=cwd)]
    home = GeminiHome(run.home)
    sessions = home.sessions(run.workspace)
    saved = [e for s in sessions for e in load_session(s.path).events(cwd=s.project)]
    if not sessions:
        # A failed API call: 0.61.0 takes the prompt back out of the file ($set.messages with
        # only the injected context), so the session is not resumable and nothing is listed.
        assert not any(isinstance(e, TurnCompleted) and e.ok for e in live)
        files = home.session_files(run.workspace)
        assert files
        assert [f.resumable for f in files] == [False] * len(files)
        return
    assert facts(saved) == facts(live)
