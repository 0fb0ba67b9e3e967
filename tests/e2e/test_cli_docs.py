"""Every ``console`` transcript in README.md and docs/ is what the commands really print.

A ```` ```console ```` block is a list of ``$ command`` lines, each followed by its output.
Each command runs (through bash) offline, in the shell the docs tell a reader to open right
after ``make demo`` (tests/kit/docs_shell.py): ``python -m gemwire.testing serve
examples/done.json`` put the pinned CLI on PATH as ``gemini`` (nothing else did), a scripted
model answers "Done." to every prompt, the Gemini home is isolated, gemwire's config file is
a fresh one, and the working directory is the isolated workspace. ```` ```console terminal````
blocks run in a pseudo-terminal and compare the screen (the live view). Output lines match
exactly, except that ``…`` stands for any text, runs of spaces count as one, and durations
(``0.3 s``) may differ.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kit.docs_shell import Shell

from gemwire.cli import exit_codes

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```console( terminal)?\n(.*?)^```$", re.DOTALL | re.MULTILINE)
DURATION = re.compile(r"\b\d+(?:\.\d+)? s\b")


def transcripts() -> list[tuple[str, bool, str]]:
    return [
        (
            f"{doc.name}:{doc.read_text()[: m.start()].count(chr(10)) + 1}",
            bool(m.group(1)),
            m.group(2),
        )
        for doc in DOCS
        for m in BLOCK.finditer(doc.read_text())
    ]


def steps(block: str) -> list[tuple[str, list[str]]]:
    """(command, expected output lines) for each ``$`` line of a block."""
    found: list[tuple[str, list[str]]] = []
    for line in block.rstrip("\n").split("\n"):
        if line.startswith("$ "):
            found.append((line[2:], []))
        else:
            assert found, f"output before the first command: {line!r}"
            found[-1][1].append(line)
    return found


def normal(line: str) -> str:
    return " ".join(DURATION.sub("N s", line).split())


def matches(expected: str, actual: str) -> bool:
    pattern = ".*".join(re.escape(part) for part in normal(expected).split("…"))
    return re.fullmatch(pattern, normal(actual)) is not None


def assert_transcript(command: str, expected: list[str], actual: list[str]) -> None:
    while actual and not actual[-1].strip():
        actual = actual[:-1]
    shown = "\n".join(actual)
    assert len(actual) == len(expected), f"$ {command}\n{shown}"
    for want, got in zip(expected, actual, strict=True):
        assert matches(want, got), f"$ {command}\nexpected: {want}\nactual:   {got}\n\n{shown}"


@pytest.mark.parametrize(
    ("where", "on_terminal", "block"),
    transcripts(),
    ids=lambda v: v if isinstance(v, str) and ":" in v else "",
)
def test_console_transcript(
    where: str, on_terminal: bool, block: str, shell: Shell, terminal: Callable[..., Any]
) -> None:
    env = dict(shell.env)
    env.pop("NO_COLOR", None)
    for command, expected in steps(block):
        if on_terminal:
            # Wide enough that no temporary path wraps.
            argv = ["bash", "-c", f"cd {shell.cwd} && {command}"]
            screen = terminal(argv, env, columns=250)
            actual = screen.lines
        else:
            result = subprocess.run(
                ["bash", "-c", command],
                cwd=shell.cwd,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            actual = (result.stdout + result.stderr).split("\n")
        assert_transcript(command, expected, actual)


@pytest.mark.parametrize(
    ("where", "on_terminal", "block"),
    transcripts(),
    ids=lambda v: v if isinstance(v, str) and ":" in v else "",
)
def test_console_commands_fail_cleanly_with_no_key(
    where: str, on_terminal: bool, block: str, shell: Shell
) -> None:
    # Every run fails (Gemini CLI exits 41): each command exits with a documented status
    # and says why, never with a traceback.
    env = shell.env | {"GEMINI_API_KEY": "", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9"}
    cwd = shell.cwd
    documented = {value for name, value in vars(exit_codes).items() if name.startswith("EXIT_")}
    for command, _ in steps(block):
        result = subprocess.run(
            ["bash", "-c", command],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        output = result.stdout + result.stderr
        assert not re.search(r"^Traceback", output, re.MULTILINE), f"$ {command}\n{output}"
        assert result.returncode in documented, f"$ {command}\n{output}"


SH_BLOCK = re.compile(r"^```sh\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def gemini_commands() -> list[tuple[str, str]]:
    """Lines of ```` ```sh ```` blocks that run ``gemini`` itself, without their comment."""
    return [
        (f"{doc.name}:{doc.read_text()[: m.start()].count(chr(10)) + 1}", command)
        for doc in DOCS
        for m in SH_BLOCK.finditer(doc.read_text())
        for line in m.group(1).splitlines()
        if (command := re.split(r"\s+# ", line, maxsplit=1)[0].strip()).startswith("gemini ")
    ]


@pytest.mark.parametrize(("where", "command"), gemini_commands(), ids=lambda v: v)
def test_a_gemini_command_runs_in_the_shell_the_docs_set_up(
    where: str, command: str, shell: Shell
) -> None:
    # `make demo` puts no `gemini` on PATH: the line that serves the examples does.
    result = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command],
        cwd=shell.cwd,
        env=shell.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, f"$ {command}\n{result.stdout}{result.stderr}"
    assert "Traceback" not in result.stderr
