"""Every code example in README.md and docs/ runs, with the pinned CLI as `gemini` on PATH."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from gemwire.errors import RunFailed
from gemwire.events import decode_event
from gemwire.testing import (
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    load_scenario,
    pinned_gemini,
)

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```(python|json)\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def blocks(language: str) -> list[tuple[str, str]]:
    return [
        (f"{doc.name}:{doc.read_text()[: m.start()].count(chr(10)) + 1}", m.group(2))
        for doc in DOCS
        for m in BLOCK.finditer(doc.read_text())
        if m.group(1) == language
    ]


def run_example(
    where: str, code: str, home: IsolatedGemini, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Examples written for a real account run offline: the pinned CLI is `gemini` on PATH,
    # the home is isolated and the workspace is here.
    monkeypatch.setenv("PATH", f"{pinned_gemini().parent}{os.pathsep}{os.environ['PATH']}")
    isolated = home.environ()
    for key in set(os.environ) - set(isolated):  # a developer's real key and settings
        monkeypatch.delenv(key)
    for key, value in isolated.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(home.workspace)
    exec(compile(code, where, "exec"), {})  # noqa: S102 - running the docs is the point


@pytest.mark.e2e
@pytest.mark.parametrize(("where", "code"), blocks("python"), ids=lambda v: v if ":" in v else "")
def test_python_example_runs(
    where: str, code: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A scripted model answers every prompt.
    with ScriptedModel(Scenario(turns=[Reply([Text("Done.")], repeat=20)])) as model:
        run_example(where, code, IsolatedGemini(model.url, root=tmp_path), monkeypatch)


@pytest.mark.e2e
@pytest.mark.parametrize(("where", "code"), blocks("python"), ids=lambda v: v if ":" in v else "")
def test_python_example_is_correct_when_the_run_fails(
    where: str, code: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # No key: every run fails (Gemini CLI exits 41). An example may raise only what it
    # says it raises: the run's typed error, from raise_for_error().
    home = IsolatedGemini("http://127.0.0.1:9", root=tmp_path, api_key="")
    try:
        run_example(where, code, home, monkeypatch)
    except RunFailed:
        if "raise_for_error()" not in code:
            raise


@pytest.mark.parametrize(("where", "text"), blocks("json"), ids=lambda v: v if ":" in v else "")
def test_json_example_is_a_scenario_or_events(where: str, text: str) -> None:
    if text.lstrip().startswith('{"type"'):
        assert [decode_event(line) for line in text.splitlines()]
    else:
        assert load_scenario(text).turns
