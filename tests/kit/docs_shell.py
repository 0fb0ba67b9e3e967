"""The shell the docs tell a reader to open: right after ``make demo``, the scripted model
served by the documented line (`SERVE`), and nothing else on ``PATH``.

The docs' examples run in it (tests/e2e/test_docs_examples.py, test_cli_docs.py), so an
example that needs more than the docs say to set up fails there: a bare ``gemini`` that
only a test's own ``PATH`` made work, once, hid that ``make demo`` puts none on it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec

from gemwire.testing.environment import live_processes

__all__ = ("ROOT", "SERVE", "Shell", "fresh_path", "served_shell", "shared_served_shell")

ROOT = Path(__file__).resolve().parents[2]
SERVE = 'eval "$(.venv/bin/python -m gemwire.testing serve examples/done.json &)"'
"""The line README.md and docs/testing.md give, run from the checkout."""
_TAG = "GEMWIRE_DOCS_SHELL"


class Shell(msgspec.Struct, frozen=True, kw_only=True):
    """The environment and the working directory of the shell after `SERVE`."""

    env: dict[str, str]
    cwd: Path


def fresh_path(path: str) -> str:
    """``path`` without the folders that hold a ``gemini`` or a ``gemwire``: a machine
    where neither is installed, as ``make demo`` leaves it."""
    return os.pathsep.join(
        folder
        for folder in path.split(os.pathsep)
        if folder and not any(shutil.which(name, path=folder) for name in ("gemini", "gemwire"))
    )


@contextmanager
def served_shell(tag: Path) -> Iterator[Shell]:
    """Run `SERVE` in bash from the checkout (with this interpreter as ``.venv/bin/python``)
    and yield the shell it leaves; the server is stopped afterwards. ``tag`` names this
    shell's processes, to find and stop them."""
    line = SERVE.replace(".venv/bin/python", sys.executable)
    # IS_SANDBOX changes what doctor says of Claude Code as root; the docs show a plain shell.
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("GEMWIRE_") and key != "IS_SANDBOX"
    }
    env.update(PATH=fresh_path(os.environ["PATH"]), **{_TAG: str(tag)})
    # The server keeps the shell's stderr: a file, since a pipe would stay open while it runs.
    try:
        with (tag / "serve.stderr").open("wb") as stderr:
            result = subprocess.run(
                ["bash", "-c", f"{line}\npwd\nenv -0"],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=stderr,
                timeout=60,
                check=True,
            )
        cwd, _, variables = result.stdout.partition(b"\n")
        shell_env = dict(
            item.split("=", 1) for item in variables.decode().split("\0") if "=" in item
        )
        shell_env.pop(_TAG)
        yield Shell(env=shell_env, cwd=Path(cwd.decode()))
    finally:
        for pid in live_processes(f"{_TAG}={tag}", settle=0):
            os.kill(pid, signal.SIGTERM)
        live_processes(f"{_TAG}={tag}", settle=10)


@contextmanager
def shared_served_shell(tag: Path) -> Iterator[Callable[[], Shell]]:
    """`served_shell` once for a module's examples: yields ``fresh()``, which puts back
    everything an example can change (the isolated root `SERVE` made: Gemini home,
    workspace, gemwire's config and cache, ``TMPDIR``) as `SERVE` left it, and returns the
    shell. Only the scripted model goes on from one example to the next: it answers every
    prompt alike (examples/done.json), so what it says does not depend on what came before.
    """
    with served_shell(tag) as shell:
        root = Path(shell.env["GEMINI_CLI_HOME"]).parent
        assert shell.cwd.is_relative_to(root), (shell.cwd, root)
        pristine = tag / "pristine"
        shutil.copytree(root, pristine, symlinks=True)

        def fresh() -> Shell:
            shutil.rmtree(root)
            shutil.copytree(pristine, root, symlinks=True)
            return shell

        yield fresh
