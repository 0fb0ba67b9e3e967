"""A session file with a broken line, given to the real Gemini CLI 0.61.0 with
``--session-file``: the CLI writes the session anew (without the broken line) under a name and a
header of its own. Recorded into tests/fixtures/gemini-sessions/0.61.0 (``GEMWIRE_RECORD=1``),
checked here live and in tests/unit/sessions/test_rewritten_session_file.py from the recording
(docs/gemini-cli.md#a-session-file-given-to---session-file)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from kit.corpus import FIXTURES

from gemwire import run_gemini_sync
from gemwire.events import UserMessage
from gemwire.sessions import GeminiHome, load_session
from gemwire.testing import IsolatedGemini, Reply, Scenario, ScriptedModel, Text
from gemwire.testing.recorder import PLACEHOLDERS, MachinePaths

pytestmark = [pytest.mark.e2e]

RECORDING = FIXTURES / "gemini-sessions" / "0.61.0" / "session_file_after_broken_line"
RECORD = os.environ.get("GEMWIRE_RECORD") == "1"

HEADER_KEYS = [
    "sessionId",
    "projectHash",
    "startTime",
    "lastUpdated",
    "kind",
    "messageCount",
    "userMessageCount",
    "firstUserMessage",
    "hasResumableContent",
]
"""What 0.61.0 writes into the header of a session it imported: `loadConversationRecord`'s
summary of the file given, its own counts included."""


def test_a_broken_session_file_is_written_anew_and_read_whole(tmp_path: Path) -> None:
    answers = [Reply([Text("First answer.")]), Reply([Text("Second answer.")])]
    scenario = Scenario(turns=[*answers, Reply([Text("Third.")])])
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        first = run_gemini_sync("first", env.gemini_options())
        run_gemini_sync("second", env.gemini_options(resume=first.session_id))
        [saved] = env.session_files()
        lines = saved.read_bytes().split(b"\n")
        assert json.loads(lines[4])["content"] == "First answer."
        lines[4] = lines[4][: len(lines[4]) // 2]  # the first answer's record, cut short
        broken = tmp_path / "broken.jsonl"
        broken.write_bytes(b"\n".join(lines))
        third = run_gemini_sync("third", env.gemini_options(session_file=str(broken)))
        assert env.live_processes() == []
    assert (third.ok, third.answer) == (True, "Third."), third
    sid = third.session_id
    assert sid is not None
    # One file of the new session: the stub its start-up wrote beside it is removed.
    [written] = [p for p in env.session_files() if sid[:8] in p.name]
    assert re.fullmatch(rf"session-\d{{13}}-{sid[:8]}\.jsonl", written.name)
    records = [json.loads(line) for line in written.read_text().splitlines()]
    header, imported = records[0], records[1]
    assert list(header) == HEADER_KEYS
    assert (header["sessionId"], header["kind"], header["firstUserMessage"]) == (
        sid,
        "main",
        "first",
    )
    assert (header["messageCount"], header["userMessageCount"]) == (5, 3)
    assert header["hasResumableContent"] is True
    assert (imported["type"], imported["content"]) == ("info", f"Imported session from {broken}")

    [info] = [i for i in GeminiHome(str(env.home)).sessions(str(env.workspace)) if i.id == sid]
    assert (info.path, info.resumable, info.problems, info.first_prompt) == (
        str(written),
        True,
        0,
        "first",
    )
    prompts = [e.text for e in load_session(written).events() if isinstance(e, UserMessage)]
    assert prompts == ["first", "second", "third"]
    if RECORD:
        record(env, model.url, broken, written)


def record(env: IsolatedGemini, model_url: str, broken: Path, written: Path) -> None:
    workspace = str(env.workspace)
    own = [
        (model_url, PLACEHOLDERS["model_url"]),
        (hashlib.sha256(workspace.encode()).hexdigest(), PLACEHOLDERS["project_hash"]),
        (workspace, PLACEHOLDERS["workspace"]),
        (str(env.home), PLACEHOLDERS["home"]),
        (str(env.root), PLACEHOLDERS["root"]),
    ]
    machine = MachinePaths()
    shutil.rmtree(RECORDING, ignore_errors=True)
    RECORDING.mkdir(parents=True)
    for source in (broken, written):
        text = source.read_bytes().decode(errors="surrogateescape")
        text = machine.scrub(text, PLACEHOLDERS.__getitem__, own)
        (RECORDING / source.name).write_bytes(text.encode(errors="surrogateescape"))
