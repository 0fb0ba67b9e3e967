"""Every code example in README.md and docs/ runs, with the pinned CLI as `gemini` on PATH."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

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


@pytest.mark.e2e
@pytest.mark.parametrize(("where", "code"), blocks("python"), ids=lambda v: v if ":" in v else "")
def test_python_example_runs(
    where: str, code: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Examples written for a real account run offline: the pinned CLI is `gemini` on PATH,
    # a scripted model answers every prompt, the home is isolated and the workspace is here.
    monkeypatch.setenv("PATH", f"{pinned_gemini().parent}{os.pathsep}{os.environ['PATH']}")
    with ScriptedModel(Scenario(turns=[Reply([Text("Done.")], repeat=20)])) as model:
        home = IsolatedGemini(model.url, root=tmp_path)
        isolated = home.environ()
        for key in set(os.environ) - set(isolated):  # a developer's real key and settings
            monkeypatch.delenv(key)
        for key, value in isolated.items():
            monkeypatch.setenv(key, value)
        monkeypatch.chdir(home.workspace)
        exec(compile(code, where, "exec"), {})  # noqa: S102 - running the docs is the point


@pytest.mark.parametrize(("where", "text"), blocks("json"), ids=lambda v: v if ":" in v else "")
def test_json_example_is_a_scenario_or_events(where: str, text: str) -> None:
    if text.lstrip().startswith('{"type"'):
        assert [decode_event(line) for line in text.splitlines()]
    else:
        assert load_scenario(text).turns
