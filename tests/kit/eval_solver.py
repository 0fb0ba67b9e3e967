#!/usr/bin/env python3
"""A stand-in Gemini CLI for eval tests, run as its executable (standard library only).

Its prompt names a number; it writes that number to ``answer`` on an attempt's second try
and ``0`` on the first (the attempt number ends its workspace's name, ``<task>.gemini.<n>``),
notes in ``seen`` what it sees of the output folder's workspaces, and prints a turn Gemini
CLI 0.61.0 recorded (tests/fixtures), so gemwire sees a good turn. The attempt named in its
home's ``.gemini/hold`` (a configured home's settings files are copied into a sandboxed
attempt's) never finishes: it waits until it is stopped, so a run can be stopped with that
attempt unfinished.
"""

from __future__ import annotations

import os
import re
import signal
import sys
from pathlib import Path

RECORDED = (
    Path(__file__).resolve().parents[1]
    / "fixtures/gemini/0.61.0/plain_answer/stream-json/run-1.stdout"
)


def main() -> None:
    if "--version" in sys.argv:
        print("0.61.0")
        return
    prompt = sys.stdin.read()
    here = Path.cwd()
    hold = Path(os.environ.get("GEMINI_CLI_HOME", "/nonexistent"), ".gemini", "hold")
    if hold.is_file() and hold.read_text() == here.name:
        signal.pause()  # until the run stops it
    number = re.search(r"\d+", prompt)
    first = here.name.endswith(".1")
    Path("answer").write_text("0" if first or number is None else number[0])
    Path("seen").write_text(" ".join(sorted(os.listdir(here.parent))))
    sys.stdout.write(RECORDED.read_text())


if __name__ == "__main__":
    main()
