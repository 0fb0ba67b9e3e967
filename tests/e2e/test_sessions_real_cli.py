"""The real Gemini CLI 0.61.0 and gemwire agree on which sessions exist and how they are numbered."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gemwire.events import UserMessage
from gemwire.sessions import GeminiHome, load_session
from gemwire.testing import CliRun, RecordingCase, Reply, Scenario, Text
from gemwire.testing.recorder import run_case

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

LISTED = re.compile(r"^\s+(\d+)\. .* \[([0-9a-f-]{36})\]$", re.MULTILINE)


async def test_index_order_and_lookup_match_gemini_list_sessions(tmp_path: Path) -> None:
    case = RecordingCase(
        scenario=Scenario(turns=[Reply([Text("ok")], repeat=10)]),
        runs=[
            CliRun(prompt="first session"),
            CliRun(prompt="second session"),
            CliRun(prompt="back to the first", args=["--resume", "1"]),
            CliRun(prompt="", args=["--list-sessions"]),
        ],
    )
    result = await run_case(case, "0.61.0", "stream-json", tmp_path)
    assert [o.returncode for o in result.outputs] == [0, 0, 0, 0]
    listed = [(int(n), sid) for n, sid in LISTED.findall(result.outputs[3].stdout.decode())]
    home = GeminiHome(result.env.home)
    ours = home.sessions(result.env.workspace)
    assert [(s.index, s.id) for s in ours] == listed
    assert len(listed) == 2
    # Resumed in the same or a later minute: the second run's session may now sort first
    # (a resume rewrites startTime); whichever it is, index 1 means the same for both.
    first = home.find("1", result.env.workspace)
    assert first.id == listed[0][1]
    resumed = next(s for s in ours if s.first_prompt == "first session")
    events = load_session(resumed.path).events()
    prompts = [e.text for e in events if isinstance(e, UserMessage)]
    assert prompts == ["first session", "back to the first"]
