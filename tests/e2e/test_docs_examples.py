"""Every code example in README.md and docs/ runs as written, in the shell the docs tell a
reader to open right after ``make demo`` (tests/kit/docs_shell.py): the scripted model served,
the pinned CLI as ``gemini`` put on PATH by it, and by nothing else."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from kit.docs_shell import ROOT, SERVE, Shell, served_shell

from gemwire.errors import RunFailed
from gemwire.events import decode_event
from gemwire.testing import load_scenario, pinned_gemini

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```(python|json)\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def blocks(language: str) -> list[tuple[str, str]]:
    return [
        (f"{doc.name}:{doc.read_text()[: m.start()].count(chr(10)) + 1}", m.group(2))
        for doc in DOCS
        for m in BLOCK.finditer(doc.read_text())
        if m.group(1) == language
    ]


def run_example(where: str, code: str, shell: Shell, monkeypatch: pytest.MonkeyPatch) -> None:
    # In the shell's environment alone (a developer's real key and settings are not there).
    for key in set(os.environ) - set(shell.env):
        monkeypatch.delenv(key)
    for key, value in shell.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(shell.cwd)
    exec(compile(code, where, "exec"), {})  # noqa: S102 - running the docs is the point


@pytest.mark.e2e
@pytest.mark.parametrize(("where", "code"), blocks("python"), ids=lambda v: v if ":" in v else "")
def test_python_example_runs(
    where: str, code: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with served_shell(tmp_path) as shell:  # the scripted model answers every prompt
        run_example(where, code, shell, monkeypatch)


@pytest.mark.e2e
@pytest.mark.parametrize(("where", "code"), blocks("python"), ids=lambda v: v if ":" in v else "")
def test_python_example_is_correct_when_the_run_fails(
    where: str, code: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # No key: every run fails (Gemini CLI exits 41). An example may raise only what it
    # says it raises: the run's typed error, from raise_for_error().
    with served_shell(tmp_path) as shell:
        no_key = {"GEMINI_API_KEY": "", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9"}
        shell = Shell(env=shell.env | no_key, cwd=shell.cwd)
        try:
            run_example(where, code, shell, monkeypatch)
        except RunFailed:
            if "raise_for_error()" not in code:
                raise


@pytest.mark.e2e
def test_the_served_shell_has_gemini_from_serve_alone(tmp_path: Path) -> None:
    # What makes a bare `gemini` in an example fail when the docs do not set it up.
    with served_shell(tmp_path) as shell:
        path = shell.env["PATH"].split(os.pathsep)
        assert path[1] == str(pinned_gemini().parent)
        assert not any((Path(folder) / "gemini").exists() for folder in path[2:])


def test_the_docs_give_the_line_that_serves_the_examples() -> None:
    for doc in ("README.md", "docs/testing.md", "docs/quickstart.md"):
        assert SERVE in (ROOT / doc).read_text(), doc


@pytest.mark.parametrize(("where", "text"), blocks("json"), ids=lambda v: v if ":" in v else "")
def test_json_example_is_a_scenario_or_events(where: str, text: str) -> None:
    if text.lstrip().startswith('{"type"'):
        assert [decode_event(line) for line in text.splitlines()]
    else:
        assert load_scenario(text).turns
