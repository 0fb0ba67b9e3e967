"""The install README.md shows works today: a wheel from ``make dist``, with and without [cli]."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run(argv: Sequence[str | Path]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.slow
def test_the_wheel_installs_with_and_without_the_cli_extra(tmp_path: Path) -> None:
    built = run(
        ["make", "-C", ROOT, "dist", f"DIST={tmp_path / 'dist'}", f"PYTHON={sys.executable}"]
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("gemwire-*-py3-none-any.whl")
    run([sys.executable, "-m", "venv", tmp_path / "venv"]).check_returncode()
    bin_ = tmp_path / "venv" / "bin"
    pip: list[str | Path] = [bin_ / "python", "-m", "pip", "install", "--quiet"]

    assert run([*pip, wheel]).returncode == 0
    library = run([bin_ / "python", "-c", "import gemwire; print(gemwire.__version__)"])
    assert (library.returncode, library.stdout.strip()) == (0, wheel.name.split("-")[1])
    bare = run([bin_ / "gemwire", "doctor"])
    assert (bare.returncode, bare.stdout) == (2, "")
    assert bare.stderr == (
        "gemwire: the command line needs the [cli] extra: pip install 'click>=8.1' 'rich>=13'\n"
    )

    assert run([*pip, f"{wheel}[cli]"]).returncode == 0
    cli = run([bin_ / "gemwire", "--version"])
    assert (cli.returncode, cli.stdout) == (0, f"gemwire, version {wheel.name.split('-')[1]}\n")
