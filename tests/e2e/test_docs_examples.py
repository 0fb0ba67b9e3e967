"""Every code example in README.md and docs/ runs as written, in the shell the docs tell a
reader to open right after ``make demo`` (tests/kit/docs_shell.py): the scripted model served,
the pinned CLI as ``gemini`` put on PATH by it, and by nothing else."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from kit.docs_shell import ROOT, SERVE, Shell

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


def runs_its_own_home(code: str) -> bool:
    """Whether an example sets up its own scripted model and home (`IsolatedGemini`) and
    runs its CLI in that home's environment alone (``home.environ()``), which sets the key
    and the model's address itself: the shell's key is never read, and with none the
    example runs exactly as in test_python_example_runs."""
    return "IsolatedGemini(" in code


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
    where: str, code: str, monkeypatch: pytest.MonkeyPatch, shell: Shell
) -> None:
    run_example(where, code, shell, monkeypatch)  # the scripted model answers every prompt


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("where", "code"),
    [(where, code) for where, code in blocks("python") if not runs_its_own_home(code)],
    ids=lambda v: v if ":" in v else "",
)
def test_python_example_is_correct_when_the_run_fails(
    where: str, code: str, monkeypatch: pytest.MonkeyPatch, shell: Shell
) -> None:
    # No key: every run fails (Gemini CLI exits 41). An example may raise only what it
    # says it raises: the run's typed error, from raise_for_error().
    no_key = {"GEMINI_API_KEY": "", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9"}
    shell = Shell(env=shell.env | no_key, cwd=shell.cwd)
    try:
        run_example(where, code, shell, monkeypatch)
    except RunFailed:
        if "raise_for_error()" not in code:
            raise


@pytest.mark.e2e
def test_the_served_shell_has_gemini_from_serve_alone(shell: Shell) -> None:
    # What makes a bare `gemini` in an example fail when the docs do not set it up.
    path = shell.env["PATH"].split(os.pathsep)
    assert path[1] == str(pinned_gemini().parent)
    assert not any((Path(folder) / "gemini").exists() for folder in path[2:])


def test_examples_that_run_in_their_own_home_never_read_the_shell_s_key() -> None:
    # What lets test_python_example_is_correct_when_the_run_fails leave them out: each
    # runs its CLI in its home's environment alone.
    own = [code for _, code in blocks("python") if runs_its_own_home(code)]
    assert own
    for code in own:
        assert re.search(r"env=\w+\.environ\(\)", code), code


def test_the_docs_give_the_line_that_serves_the_examples() -> None:
    for doc in ("README.md", "docs/testing.md", "docs/quickstart.md"):
        assert SERVE in (ROOT / doc).read_text(), doc


@pytest.mark.parametrize(("where", "text"), blocks("json"), ids=lambda v: v if ":" in v else "")
def test_json_example_is_a_scenario_or_events(where: str, text: str) -> None:
    if text.lstrip().startswith('{"type"'):
        assert [decode_event(line) for line in text.splitlines()]
    else:
        assert load_scenario(text).turns
