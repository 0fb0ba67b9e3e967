"""The ``gemwire`` script without the ``[cli]`` extra says what to install (exit 2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gemwire.__main__ import cli_requirements
from gemwire.cli import _broken_pipe


def test_the_cli_extra_comes_from_the_package_metadata() -> None:
    assert cli_requirements() == ["click>=8.1", "rich>=13"]


@pytest.mark.parametrize("missing", ["click", "rich"])
def test_without_the_extra_gemwire_says_how_to_install_it(missing: str) -> None:
    # sys.modules[name] = None makes `import name` fail as if it were not installed.
    code = (
        f"import sys; sys.modules[{missing!r}] = None; sys.argv = ['gemwire', 'doctor']; "
        "from gemwire.__main__ import main; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "gemwire: the command line needs the [cli] extra: pip install 'click>=8.1' 'rich>=13'\n"
    )


def test_with_the_extra_gemwire_runs_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gemwire", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("gemwire, version ")


def rich_exit_on_a_broken_pipe() -> SystemExit:
    try:
        try:
            raise BrokenPipeError(32, "Broken pipe")
        except BrokenPipeError:
            raise SystemExit(1)  # what rich's Console.on_broken_pipe does  # noqa: B904
    except SystemExit as exc:
        return exc


@pytest.mark.parametrize(
    ("exc", "broken"),
    [
        (BrokenPipeError(32, "Broken pipe"), True),
        (rich_exit_on_a_broken_pipe(), True),
        (ExceptionGroup("run", [BrokenPipeError(32, "Broken pipe")]), True),
        (ExceptionGroup("run", [BrokenPipeError(32, "x"), ValueError("y")]), False),
        (SystemExit(1), False),
        (OSError(5, "I/O error"), False),
    ],
)
def test_only_a_reader_gone_away_counts_as_a_broken_pipe(exc: BaseException, broken: bool) -> None:
    assert _broken_pipe(exc) is broken


@pytest.mark.parametrize("command", [["run", "hi"], ["sessions", "list"], ["doctor"]])
def test_a_current_folder_that_was_removed_is_one_clear_line(
    tmp_path: Path, command: list[str]
) -> None:
    # A shell left in a folder that was removed (a temp workspace cleaned up) gave a traceback.
    gone = tmp_path / "gone"
    gone.mkdir()
    code = f"import os; os.chdir({str(gone)!r}); os.rmdir({str(gone)!r}); "
    code += "from gemwire.cli import main; main(prog_name='gemwire')"
    done = subprocess.run(
        [sys.executable, "-c", code, *command],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "Error: the current folder no longer exists (removed while this shell was in it); "
        "cd to one that does\n"
    )
