"""The session Gemini CLI 0.61.0 wrote anew from a session file with a broken line
(``--session-file``; recorded by tests/e2e/test_session_file_rewritten.py): gemwire reads the
broken original with the broken line as a problem, and the rewritten one whole."""

from __future__ import annotations

import json
from pathlib import Path

from kit.corpus import FIXTURES

from gemwire.events import UserMessage
from gemwire.sessions import load_session, read_session_info

RECORDING = FIXTURES / "gemini-sessions" / "0.61.0" / "session_file_after_broken_line"
[REWRITTEN] = sorted(RECORDING.glob("session-*.jsonl"))


def prompts(path: Path) -> list[str]:
    return [e.text for e in load_session(path).events() if isinstance(e, UserMessage)]


def test_the_rewritten_header_holds_the_import_summary() -> None:
    header = json.loads(REWRITTEN.read_text().splitlines()[0])
    assert {
        k: v for k, v in header.items() if k not in ("sessionId", "startTime", "lastUpdated")
    } == {
        "projectHash": "__PROJECT_HASH__",
        "kind": "main",
        "messageCount": 5,
        "userMessageCount": 3,
        "firstUserMessage": "first",
        "hasResumableContent": True,
    }
    assert REWRITTEN.name == f"session-1795630436462-{header['sessionId'][:8]}.jsonl"


def test_the_rewritten_session_reads_whole() -> None:
    info = read_session_info(REWRITTEN)
    assert (info.resumable, info.problems, info.first_prompt, info.messages) == (
        True,
        0,
        "first",
        7,
    )
    assert prompts(REWRITTEN) == ["first", "second", "third"]


def test_the_broken_original_reads_with_its_broken_line_as_a_problem() -> None:
    broken = load_session(RECORDING / "broken.jsonl")
    assert [p.line for p in broken.problems] == [5]
    assert prompts(RECORDING / "broken.jsonl") == ["first", "second"]
