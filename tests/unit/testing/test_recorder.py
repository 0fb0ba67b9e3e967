"""`MachinePaths`: what every recorder replaces, for Gemini CLI and the other agents alike."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from gemwire.testing.recorder import MachinePaths


def test_this_machines_paths_become_placeholders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A worktree's pinned agents: each node_modules a link to the main checkout's.
    clis, real = tmp_path / "wt" / "clis", tmp_path / "main" / "clis" / "qwen" / "node_modules"
    real.mkdir(parents=True)
    (clis / "qwen").mkdir(parents=True)
    (clis / "qwen" / "node_modules").symlink_to(real)
    monkeypatch.setenv("GEMWIRE_CLIS_DIR", str(clis))
    checkout = Path(__file__).resolve().parents[3]
    home, tmp = str(Path.home()), tempfile.gettempdir()
    text = "\n".join(
        [
            f"{real}/@qwen-code/bundled/batch/SKILL.md",  # as Node names it: the real path
            f"{clis}/qwen/node_modules/x.js",
            f"{checkout}/src/gemwire/x.py",
            f"{home}/.gemini/tmp/workspace",
            f"{tmp}/qwen-review-1.json",
            "{root}/workspace/.gemini/tmp/x and /tmpfoo and ~/tmp/",
        ]
    )
    assert MachinePaths().scrub(text, lambda name: f"<{name}>", [("{root}", "<root>")]) == (
        "<clis>/qwen/node_modules/@qwen-code/bundled/batch/SKILL.md\n"
        "<clis>/qwen/node_modules/x.js\n"
        "<checkout>/src/gemwire/x.py\n"
        "<user_home>/.gemini/tmp/workspace\n"
        "<tmp>/qwen-review-1.json\n"
        "<root>/workspace/.gemini/tmp/x and /tmpfoo and ~/tmp/"
    )
