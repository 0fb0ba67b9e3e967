"""`gemwire demo` (what `make demo` runs) from a clean state: it finishes in well under a
minute, and every file it says changed did change, on disk, the way it says."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gemwire.cli.demo import DEMO_FILES, DEMO_PROMPT

pytestmark = pytest.mark.e2e

GEMWIRE = str(Path(sys.executable).with_name("gemwire"))


def test_the_demo_changes_what_it_says_it_changes(tmp_path: Path) -> None:
    started = time.monotonic()
    result = subprocess.run(
        [GEMWIRE, "demo", "--root", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stdout + result.stderr
    assert elapsed < 30
    workspace = tmp_path.resolve() / "workspace"
    out = result.stdout
    lines = out.splitlines()
    history = lines.index("The same session, loaded back from Gemini CLI's own session file:")
    live, loaded = lines[:history], lines[history:]
    assert f"> {DEMO_PROMPT}" in live

    def claimed(part: list[str]) -> dict[str, str]:
        return {
            line.split(": ", 1)[1]: line.split(":")[0].strip()
            for line in part
            if line.startswith(("  modified: ", "  written: ", "  created: "))
        }

    # What the transcript claims...
    assert claimed(live) == {
        f"{workspace}/calc.py": "modified",
        f"{workspace}/SUMMARY.md": "written",  # stream-json cannot tell created from modified
    }
    # ... the session file says too (and it can tell: its diffs are recorded)...
    assert claimed(loaded) == {
        f"{workspace}/calc.py": "modified",
        f"{workspace}/SUMMARY.md": "created",
    }
    assert f"> {DEMO_PROMPT}" in loaded
    tool_lines = [line for line in live if line.startswith("[")]
    assert tool_lines == [line for line in loaded if line.startswith("[")]
    assert f"What changed on disk, in {workspace}:" in lines
    assert "  modified calc.py" in lines
    assert "  created SUMMARY.md" in lines
    # ...is what the disk says.
    assert (workspace / "calc.py").read_text() == DEMO_FILES["calc.py"].replace("a - b", "a + b")
    assert (workspace / "SUMMARY.md").read_text().startswith("# Summary\n")
    assert (workspace / "test_calc.py").read_text() == DEMO_FILES["test_calc.py"]
    tests = subprocess.run(
        [sys.executable, "-m", "unittest", "-q", "test_calc"],
        cwd=workspace,
        capture_output=True,
        text=True,
        check=False,
    )
    assert tests.returncode == 0, tests.stderr
    assert lines[-1] == f"Kept: {tmp_path.resolve()}"


def test_the_demo_cleans_up_after_itself_by_default(tmp_path: Path) -> None:
    result = subprocess.run(
        [GEMWIRE, "demo"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path), "HOME": str(tmp_path / "home")},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # The isolated home and workspace are gone; the runners' session-lock folder is shared.
    assert [p.name for p in tmp_path.iterdir()] == [f"gemwire-sessions-{os.getuid()}"]
    assert not (tmp_path / "home").exists()  # and the user's home was never touched
