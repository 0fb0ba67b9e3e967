"""The live view on a real terminal: gemwire in a pseudo-terminal, the screen read back by a
terminal emulator (pyte), asserted as a person would see it."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gemwire.testing import (
    Delay,
    FunctionCall,
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    pinned_gemini,
)

pytestmark = pytest.mark.e2e

GEMWIRE = str(Path(sys.executable).with_name("gemwire"))
COLUMNS = 100  # as the `terminal` fixture (conftest.py) sets it
Terminal = Callable[..., Any]


def isolated_env(env: IsolatedGemini, **extra: str) -> dict[str, str]:
    environ = env.environ(extra)
    environ.pop("NO_COLOR", None)
    environ.update(extra)
    return environ


SCENARIO = Scenario(
    turns=[
        Reply(
            [
                Text("Writing it."),
                Delay(0.5),  # long enough for the live part to be drawn
                FunctionCall("write_file", {"file_path": "a.txt", "content": "a\n"}),
            ]
        ),
        Reply([FunctionCall("run_shell_command", {"command": "cat a.txt", "description": "show"})]),
        Reply([Text("Done: **a.txt** holds `a`.")]),
    ]
)


def run_on_terminal(terminal: Terminal, tmp_path: Path, *args: str, **extra: str) -> Any:
    with ScriptedModel(SCENARIO) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        argv = [GEMWIRE, "run", "--executable", str(pinned_gemini()), "--cwd", str(env.workspace)]
        return terminal([*argv, *args, "write a.txt"], isolated_env(env, **extra))


def test_run_live_shows_cards_the_answer_the_outcome_and_the_resume_line(
    terminal: Terminal, tmp_path: Path
) -> None:
    screen = run_on_terminal(terminal, tmp_path, "-y")
    assert screen.exit_code == 0
    lines = screen.lines
    session = lines[0].split(" session ")[1]
    assert lines[0] == f"gemini · model auto · session {session}"
    assert lines[1:4] == ["> write a.txt", "", "Writing it."]
    cards = [line for line in lines if line.startswith(("✓ ", "✗ ")) and " done" not in line]
    assert [card.split("  ")[0] for card in cards] == ["✓ ✎ write_file", "✓ ▶ run_shell_command"]
    assert cards[0].startswith("✓ ✎ write_file  a.txt")
    assert cards[0].endswith(" s")  # timed, right-aligned
    assert len(cards[0]) == COLUMNS
    index = lines.index(cards[1])
    assert lines[index + 1] == "    a"  # the shell's output, previewed under its card
    assert "Done: a.txt holds a." in lines  # Markdown rendered: no ** or backticks left
    assert lines[-2].startswith("✓ done · 2 tool calls · 1 file changed · ")
    assert lines[-1] == f"↻ resume: gemini --resume {session}"
    # The moving part (spinner, footer) was drawn while it ran and is gone at the end.
    assert "working · " in screen.raw.decode()
    assert "working · " not in screen.text
    assert b"\x1b[32m" in screen.raw  # green: a terminal gets colour


def test_no_color_on_a_terminal_gets_the_plain_transcript(
    terminal: Terminal, tmp_path: Path
) -> None:
    screen = run_on_terminal(terminal, tmp_path, "-y", NO_COLOR="1")
    assert screen.exit_code == 0
    assert b"\x1b[" not in screen.raw  # no colour, no cursor movement
    assert screen.lines[1:6] == [
        "> write a.txt",
        "Writing it.",
        "[edit] write_file: a.txt",
        "  -> ok",
        f"  written: {tmp_path.resolve()}/workspace/a.txt",
    ]
    assert screen.lines[-1].startswith("resume: gemini --resume ")


def test_quiet_on_a_terminal_prints_only_the_answer(terminal: Terminal, tmp_path: Path) -> None:
    screen = run_on_terminal(terminal, tmp_path, "-y", "--quiet")
    assert (screen.exit_code, screen.lines) == (
        0,
        ["Writing it.", "", "Done: **a.txt** holds `a`."],
    )


def test_demo_live_on_a_terminal(terminal: Terminal, tmp_path: Path) -> None:
    started = time.monotonic()
    screen = terminal([GEMWIRE, "demo", "--root", str(tmp_path)], {**os.environ})
    assert screen.exit_code == 0, screen.text
    assert time.monotonic() - started < 60
    lines = screen.lines
    history = lines.index("The same session, loaded back from Gemini CLI's own session file:")

    def cards(part: list[str]) -> list[str]:
        return [
            line.split("  ")[0] for line in part if line.startswith("✓ ") and " done" not in line
        ]

    # The live run and Gemini's own record of it, shown by the same view.
    assert (
        cards(lines[:history])
        == cards(lines[history:])
        == [
            "✓ ≡ read_file",
            "✓ ▶ run_shell_command",
            "✓ ⌕ grep_search",
            "✓ ✎ replace",
            "✓ ▶ run_shell_command",
            "✓ ✎ write_file",
        ]
    )
    assert "AssertionError: -1 != 5" in screen.text  # the first test run, previewed
    assert (
        "Fixed: add subtracted instead of adding. Both tests pass now, and SUMMARY.md says what changed."
        in lines
    )
    resume = next(line for line in lines if line.startswith("↻ resume: gemini --resume "))
    assert lines[lines.index(resume) - 1].startswith("✓ done · 6 tool calls · 2 files changed")
    assert "    +    return a + b" in lines  # the diff of calc.py, from the disk
    assert "    -    return a - b" in lines
    assert "working · " not in screen.text


def test_ctrl_c_keeps_what_was_shown_and_prints_the_outcome_and_resume_line(
    terminal: Terminal, tmp_path: Path
) -> None:
    scenario = Scenario(
        turns=[
            Reply(
                [
                    Text("Starting the long job."),
                    FunctionCall(
                        "run_shell_command", {"command": "sleep 600", "description": "wait"}
                    ),
                ]
            ),
            Reply([Text("never reached")]),
        ]
    )
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        argv = [GEMWIRE, "run", "-y", "--executable", str(pinned_gemini())]
        argv += ["--cwd", str(env.workspace), "wait"]
        # setsid -c: gemwire gets the terminal as its controlling one, so ^C is a SIGINT
        screen = terminal(
            ["setsid", "-w", "-c", *argv], isolated_env(env), keys=[(b"sleep 600", b"\x03")]
        )
        assert env.live_processes() == []
    lines = screen.lines
    assert screen.exit_code == 130, screen.text
    assert "Starting the long job." in lines
    card = next(line for line in lines if line.startswith("⊘ "))  # the running card, kept
    assert card.startswith("⊘ ▶ run_shell_command  sleep 600")
    session = lines[0].split(" session ")[1]
    assert lines[-3].startswith("✗ failed (cancelled) · 1 tool call · ")
    assert lines[-2].startswith("  cancelled: interrupted (Ctrl-C)")
    assert lines[-1] == f"↻ resume: gemini --resume {session}"
