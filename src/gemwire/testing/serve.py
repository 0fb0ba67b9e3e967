"""``python -m gemwire.testing serve SCENARIO``: the scripted model for a shell.

It starts a `ScriptedModel` and an `IsolatedGemini` home, prints the ``export`` lines
that point a shell at them, and serves until Ctrl-C, SIGTERM or SIGHUP (one it was started
ignoring, as a script's ``… &`` ignores Ctrl-C, stays ignored). In that shell
``gemini`` is the pinned CLI, ``gemwire`` and ``python`` are this environment's, and
every example of the docs runs offline, with no key and never your ``~/.gemini``::

    eval "$(.venv/bin/python -m gemwire.testing serve examples/done.json &)"

It closes its stdout once the lines are out, so ``$(… &)`` returns at once while the
model keeps serving in the background (``kill`` it, as the last line says); in a
terminal of its own it shows the lines to paste elsewhere.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from gemwire._portable import HANGUP, block_signals, wait_for_signal
from gemwire.testing.agents import IsolatedQwen
from gemwire.testing.environment import IsolatedGemini
from gemwire.testing.model_server import ScriptedModel
from gemwire.testing.pinned import pinned_gemini
from gemwire.testing.scenario import load_scenario

__all__ = ("STOPPING", "serve", "shell_lines")

STOPPING = (signal.SIGINT, signal.SIGTERM, *HANGUP)
"""The signals that stop the server, cleanly (the home is removed, nothing is printed)."""


def shell_lines(env: Mapping[str, str], inherited: Mapping[str, str], workspace: Path) -> list[str]:
    """The lines that turn a shell's ``inherited`` environment into ``env``, then enter
    ``workspace``.

    >>> shell_lines({"A": "1", "B": "a b"}, {"A": "1", "C": "x"}, Path("/w s"))
    ["export B='a b'", 'unset C', "cd '/w s'"]
    """
    lines = [
        f"export {key}={shlex.quote(value)}"
        for key, value in env.items()
        if inherited.get(key) != value
    ]
    lines += [f"unset {key}" for key in inherited if key not in env]
    lines.append(f"cd {shlex.quote(str(workspace))}")
    return lines


def serve(scenario_path: Path, out: TextIO) -> int:
    """Serve ``scenario_path`` until a signal in `STOPPING`; the lines go to ``out``."""
    scenario = load_scenario(scenario_path)
    launcher = pinned_gemini()
    # A signal it was started ignoring stays ignored: a shell script starts `… &` with
    # Ctrl-C ignored, as it then shares the terminal with the command in front (and nohup
    # ignores SIGHUP). sigwait would take a blocked signal even so.
    stopping = [s for s in STOPPING if signal.getsignal(s) is not signal.SIG_IGN]
    # Blocked before the server's threads start, so that they inherit the mask and the
    # signals wait for sigwait below instead of interrupting a request half-served.
    block_signals(stopping)
    with ScriptedModel(scenario) as model, IsolatedGemini(model.url, files=scenario.files) as home:
        path = os.pathsep.join(
            [str(Path(sys.executable).parent), str(launcher.parent), os.environ.get("PATH", "")]
        )
        # Qwen Code on the same model and home (docs/eval.md compares it with Gemini CLI):
        # its settings only, so its command is never looked for here.
        qwen = IsolatedQwen(model, root=home.root / "qwen", command=("qwen",))
        shutil.copytree(qwen.home / ".qwen", home.home / ".qwen")
        env = home.environ(
            {
                "PATH": path,  # `gemini` for the shell and for gemwire (GEMINI_CLI_PATH: no)
                # gemwire's own config and cache, not the user's
                "GEMWIRE_CONFIG": str(home.root / "config.toml"),
                "XDG_CACHE_HOME": str(home.root / "cache"),
                **qwen.agent_environ(),
            }
        )
        out.writelines(line + "\n" for line in shell_lines(env, os.environ, home.workspace))
        until = " Ctrl-C or: " if signal.SIGINT in stopping else ": "
        out.write(
            f"# the scripted model serves {scenario_path} at {model.url} "
            f"until{until}kill {os.getpid()}\n"
        )
        out.flush()
        _detach(out)
        wait_for_signal(stopping)
        problems = list(model.problems)
    for problem in problems:
        sys.stderr.write(f"scripted model: {problem}\n")
    return 0


def _detach(out: TextIO) -> None:
    """Hand ``out`` back: a shell reading it in ``$(…)`` sees its end and goes on."""
    try:
        fd = out.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a test's buffer)
        return
    with open(os.devnull, "wb") as devnull:
        os.dup2(devnull.fileno(), fd)
