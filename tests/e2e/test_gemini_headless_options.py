"""Gemini CLI 0.61.0's headless flags that `GeminiOptions` types, against the real CLI and the
scripted model: each one seen taking effect."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gemwire import RunResult, run_gemini_sync
from gemwire.testing import IsolatedGemini, Reply, Scenario, ScriptedModel, Text

pytestmark = [pytest.mark.e2e]


def run(
    scenario: Scenario, prompt: str, root: Path, *, trusted: bool = True, **options: object
) -> tuple[RunResult, IsolatedGemini, ScriptedModel]:
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, files=scenario.files, root=root)
        environ = env.environ()
        if not trusted:
            environ.pop("GEMINI_CLI_TRUST_WORKSPACE", None)
        result = run_gemini_sync(prompt, env.gemini_options(env=environ, **options))
        assert env.live_processes() == []
    return result, env, model


def test_skip_trust_runs_in_a_folder_nobody_trusted(tmp_path: Path) -> None:
    untrusted, _, _ = run(Scenario(turns=[]), "hi", tmp_path / "a", trusted=False)
    assert untrusted.error is not None
    assert untrusted.error.kind == "untrusted"
    result, _, _ = run(
        Scenario(turns=[Reply([Text("Trusted.")])]),
        "hi",
        tmp_path / "b",
        trusted=False,
        skip_trust=True,
    )
    assert (result.ok, result.answer) == (True, "Trusted.")


def test_raw_output_lets_escapes_through(tmp_path: Path) -> None:
    red = "\x1b[31mred\x1b[0m"
    sanitized, _, _ = run(Scenario(turns=[Reply([Text(red)])]), "hi", tmp_path / "a")
    raw, _, _ = run(Scenario(turns=[Reply([Text(red)])]), "hi", tmp_path / "b", raw_output=True)
    assert "\x1b" not in sanitized.answer
    assert raw.answer == red


def test_session_file_continues_the_session_saved_there(tmp_path: Path) -> None:
    first, env, _ = run(Scenario(turns=[Reply([Text("Noted.")])]), "remember 42", tmp_path)
    assert first.ok, first
    [saved] = (env.home / ".gemini" / "tmp").rglob("chats/session-*.jsonl")
    copy = tmp_path / "elsewhere.jsonl"
    copy.write_bytes(saved.read_bytes())
    with ScriptedModel(Scenario(turns=[Reply([Text("It was 42.")])])) as model:
        env = IsolatedGemini(model.url, root=tmp_path / "second")
        result = run_gemini_sync("what was it?", env.gemini_options(session_file=str(copy)))
        requests = [r for r in model.requests if r.turn is not None]
    assert (result.ok, result.answer) == (True, "It was 42.")
    assert "remember 42" in json.dumps(requests[0].body)
