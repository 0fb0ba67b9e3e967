"""Nothing a real Gemini CLI run starts outlives it, however it detached (issue 11 item 2)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from gemwire import run_gemini_sync
from gemwire.testing import (
    FunctionCall,
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(sys.platform != "linux", reason="the subreaper launcher is Linux-only"),
]

ESCAPE = "env -i setsid nohup sh -c 'echo $$ > escaped.pid; exec sleep 600' >/dev/null 2>&1 &"


def running(pid: int, settle: float = 10.0) -> bool:
    deadline = time.monotonic() + settle
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return False
        except OSError:
            return False
        time.sleep(0.05)
    return True


def test_a_shell_command_that_clears_its_environment_and_detaches_is_stopped(
    tmp_path: Path,
) -> None:
    scenario = Scenario(
        turns=[
            Reply([FunctionCall("run_shell_command", {"command": ESCAPE, "description": "bg"})]),
            Reply([Text("Started.")]),
        ]
    )
    with ScriptedModel(scenario) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        options = env.gemini_options(approval_mode="yolo")
        result = run_gemini_sync("start it", options)
    pid = int((env.workspace / "escaped.pid").read_text())
    try:
        assert (result.ok, result.answer) == (True, "Started.")
        assert not running(pid)
    finally:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
