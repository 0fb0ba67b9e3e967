"""``gemwire batch`` on a terminal: the bar counts the tasks running, and a signal's message
gets a line of its own (a fake gemini that hangs holds the tasks open)."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

FAKE = Path(__file__).parents[1] / "integration" / "fake_gemini.py"
GEMWIRE = str(Path(sys.executable).with_name("gemwire"))


def test_the_bar_counts_running_tasks_and_sigterm_is_said_on_its_own_line(
    tmp_path: Path, terminal: Callable[..., Any]
) -> None:
    launcher = tmp_path / "gemini"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    launcher.chmod(0o755)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(f'{{"id": "t{n}", "prompt": "p"}}\n' for n in range(3)))
    env = {
        **os.environ,
        "FAKE_GEMINI_MODE": "hang",
        "FAKE_GEMINI_PID_FILE": str(tmp_path / "fake.pid"),
    }
    argv = [GEMWIRE, "batch", str(tasks), "-o", str(tmp_path / "out"), "-j", "2"]
    argv += ["--executable", str(launcher)]
    screen = terminal(argv, env, columns=100, keys=[(b"2 running", signal.SIGTERM)])
    assert screen.exit_code == 143, screen.text
    [bar] = [line for line in screen.lines if line.startswith("tasks ")]
    assert "0/3 · 0 failed · 2 running ·" in bar
    assert "gemwire: batch stopped by SIGTERM; re-run to resume" in screen.lines
