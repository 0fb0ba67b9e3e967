"""`gemwire acp` with the real `gemini --acp` 0.61.0: Ctrl-C during a shell call shows the call
cancelled (``⊘``), not done (``✓``), though Gemini CLI reports it ``completed`` ("Command
cancelled by user."); the same event feeds ``--json``, the API and the web page."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gemwire.testing import (
    FunctionCall,
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    pinned_gemini_command,
)

pytestmark = pytest.mark.e2e

GEMWIRE = str(Path(sys.executable).with_name("gemwire"))
SHELL = Scenario(
    turns=[
        Reply([FunctionCall("run_shell_command", {"command": "sleep 30", "description": "wait"})]),
        Reply([Text("Slept.")]),
    ]
)


def test_ctrl_c_during_a_shell_call_shows_it_cancelled(
    tmp_path: Path, terminal: Callable[..., Any]
) -> None:
    with ScriptedModel(SHELL) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        environ = env.environ()
        environ.pop("NO_COLOR", None)
        argv = [GEMWIRE, "acp", "--permissions", "all", "--cwd", str(env.workspace), "wait"]
        screen = terminal(
            [*argv, "--", *pinned_gemini_command(), "--acp"],
            environ,
            keys=[(b"sleep 30", signal.SIGINT)],
        )
    assert screen.exit_code == 130
    assert "Traceback" not in screen.text
    (card,) = [line for line in screen.lines if "sleep 30" in line and "execute" in line]
    assert card.startswith("⊘ ")
    assert not any(line.startswith("✓") for line in screen.lines)
    assert screen.lines[-2].startswith("✗ failed (cancelled) · 1 tool call · ")
