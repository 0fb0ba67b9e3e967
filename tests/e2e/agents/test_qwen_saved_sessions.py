"""Qwen Code's saved sessions, written by the real pinned Qwen Code 0.24.4 against the
scripted model: recorded into tests/fixtures/qwen/0.24.4 (``GEMWIRE_RECORD=1``, with their
golden events), and checked against the events the same run streamed live over ACP.

The cases are test_agents_offline.py's (the same scenarios, Qwen's spelling of the tools).
The saved session and the live stream agree in every case: the answer, the tool calls and
their kinds, how each finished (a denied call fails with the same refusal in both), the
files changed; so `DIFFERENCES` (docs/sessions.md) is empty for Qwen Code.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from corpus import FIXTURES

from gemwire.events import Event, FileChanged, MessageDelta, ToolCallFinished, ToolCallStarted
from gemwire.sessions import QwenHome, load_session
from gemwire.testing.recorder import MachinePaths

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

RECORDINGS = FIXTURES / "qwen" / "0.24.4"


def _offline() -> Any:
    path = Path(__file__).with_name("test_agents_offline.py")
    spec = importlib.util.spec_from_file_location("qwen_cases_offline", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


OFFLINE = _offline()
RECORD = OFFLINE.RECORD
MACHINE = MachinePaths()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The test's folder as the agents report it (symlinks resolved)."""
    return tmp_path.resolve()


def scrub(text: str, root: Path) -> str:
    """A recording's text with its machine paths replaced by placeholders (tests/fixtures)."""
    own = [
        (str(root / "workspace"), "__WORKSPACE__"),
        (str(root / "home"), "__HOME__"),
        (str(root), "__ROOT__"),
    ]
    return MACHINE.scrub(text, lambda name: f"__{name.upper()}__", own)


def golden_events(path: Path) -> list[dict[str, Any]]:
    conversation = load_session(path)
    return [msgspec.to_builtins(event) for event in conversation.events()]


# The live run and its saved session differ here, by design of each (docs/sessions.md):
# nowhere, for these cases (Qwen Code saves the text streamed before a cancel, and a
# denied call's refusal as the live run reports it).
DIFFERENCES: dict[str, str] = {}


def _summary(events: list[Event]) -> dict[str, Any]:
    return {
        "answer": "".join(e.text for e in events if isinstance(e, MessageDelta)),
        "calls": [(e.call_id, e.kind) for e in events if isinstance(e, ToolCallStarted)],
        "finished": [(e.call_id, e.status) for e in events if isinstance(e, ToolCallFinished)],
        "files": sorted({e.path for e in events if isinstance(e, FileChanged)}),
    }


@pytest.mark.parametrize("case", list(OFFLINE.PERMISSIONS))
async def test_saved_session_agrees_with_the_live_run(case: str, root: Path) -> None:
    live, _, _, _ = await OFFLINE.run_case("qwen", case, root)
    [path] = (root / "home" / ".qwen" / "projects").glob("*/chats/*.jsonl")
    saved = list(load_session(path).events())
    assert QwenHome(root / "home").sessions(root / "workspace")[0].path == str(path)
    if RECORD:
        RECORDINGS.mkdir(parents=True, exist_ok=True)
        (RECORDINGS / f"{case}.jsonl").write_text(scrub(path.read_text(), root))
        recorded = golden_events(RECORDINGS / f"{case}.jsonl")
        (RECORDINGS / f"{case}.events.jsonl").write_text(
            "".join(json.dumps(e, sort_keys=True) + "\n" for e in recorded)
        )
    assert case not in DIFFERENCES
    assert _summary(saved) == _summary(live)
