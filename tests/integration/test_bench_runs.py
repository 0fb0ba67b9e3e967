"""Every benchmark runs as its docstring says, from the checkout, with tiny sizes.

``bench/usage.py`` once ran only with ``PYTHONPATH=tests`` (``ModuleNotFoundError:
corpus``), though its docstring says ``.venv/bin/python bench/usage.py``.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
HELPERS = {"rss.py", "served.py"}
RUN_CLIS = {
    "acp_sessions.py",
    "batch.py",
    "eval_sandbox.py",
    "gemini_start.py",
    "runner_overhead.py",
    "serve.py",
    "serve_vs_qwen.py",
    "session_follower.py",
}
TINY = {
    "acp_sessions.py": ["--sessions", "1"],
    "antigravity.py": ["--runs", "1", "--chunks", "20"],
    "batch.py": ["--tasks", "1", "--big", "1", "--ray", "0"],
    "cli_startup.py": ["--runs", "1"],
    "decode_normalize.py": ["--lines", "500", "--mb", "0.5", "--repeat", "1"],
    "eval_overhead.py": ["--attempts", "10", "-j", "2"],
    "eval_report.py": ["--attempts", "100", "--repeat", "1"],
    "eval_sandbox.py": ["--runs", "1"],
    "every_agent.py": ["--sessions", "10", "--repeat", "1"],
    "gemini_start.py": ["--runs", "1"],
    "replay_memory.py": ["--size-mb", "1", "--runs", "1"],
    "replay_process.py": ["--lines", "500", "--runs", "1"],
    "runner_overhead.py": ["--runs", "1", "--events", "20"],
    "serve.py": [
        "--runs",
        "1",
        "--sessions",
        "2",
        "--events",
        "5",
        "--pace-ms",
        "1",
        "--idle",
        "2",
        "--replay",
        "1000",
        "--settle",
        "0",
    ],
    # Once behind gemwire serve (its shared-process run is the same code with another
    # number, and a Qwen Code start more), once behind qwen serve.
    "serve_vs_qwen.py": ["--sessions", "1", "--settle", "0", "--sessions-per-agent", "1"],
    "session_follower.py": ["--runs", "1"],
    "sessions.py": ["--sessions", "10", "--mb", "0.5", "--repeat", "1"],
    "usage.py": ["--sessions", "10", "--repeat", "1"],
    "web_render.py": ["--events", "50", "--rate", "50", "--seconds", "1", "--repeat", "1"],
    "web_sessions.py": ["--sessions", "20", "--repeat", "1"],
}
"""Sizes small enough for a test: the figures mean nothing, the run is what is checked."""


def documented(script: Path) -> list[str]:
    """The command a benchmark's docstring gives, without its ``[optional]`` flags."""
    doc = ast.get_docstring(ast.parse(script.read_text())) or ""
    line = re.search(r"^\s*\.venv/bin/python (bench/\S+\.py)", doc, re.MULTILINE)
    assert line, f"{script.name}: no `.venv/bin/python bench/...` command in its docstring"
    return [line.group(1)]


def test_every_benchmark_has_its_tiny_sizes_here() -> None:
    scripts = {path.name for path in BENCH.glob("*.py")} - HELPERS
    assert scripts == set(TINY)


@pytest.mark.parametrize(
    ("name", "tiny"),
    [
        pytest.param(name, tiny, id=name, marks=[pytest.mark.e2e] if name in RUN_CLIS else [])
        for name, tiny in TINY.items()
    ],
)
def test_a_benchmark_runs_as_documented(name: str, tiny: list[str]) -> None:
    # As a person runs it: from the checkout, this venv's python, nothing added to the path.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, *documented(BENCH / name), *tiny],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
