"""`gemwire acp` with the real `gemini --acp` 0.61.0 and the scripted model."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from kit.write_a import WRITE, diff_of_a

from gemwire.cli import main
from gemwire.testing import (
    IsolatedGemini,
    Reply,
    Scenario,
    ScriptedModel,
    Text,
    pinned_gemini_command,
)
from gemwire.testing.agents import isolated_agent

pytestmark = pytest.mark.e2e

GEMWIRE = str(Path(sys.executable).with_name("gemwire"))


def invoke(tmp_path: Path, *args: str) -> tuple[int, str, IsolatedGemini]:
    with ScriptedModel(WRITE) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        result = CliRunner().invoke(
            main,
            [
                "acp",
                *args[:-1],
                "--cwd",
                str(env.workspace),
                "--",
                *pinned_gemini_command(),
                "--acp",
            ]
            if args[-1] == "gemini"
            else ["acp", *args],
            env=env.environ(),
        )
    return result.exit_code, result.stdout, env


def test_json_events_with_edits_allowed(tmp_path: Path) -> None:
    code, out, env = invoke(tmp_path, "--json", "--permissions", "edits", "write a", "gemini")
    events = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert events[-1]["type"] == "turn_completed"
    assert (events[-1]["ok"], events[-1]["answer"]) == (True, "Writing.\n\nDone.")
    assert [e["option_id"] for e in events if e["type"] == "permission_resolved"] == [
        "proceed_once"
    ]
    assert (env.workspace / "a.txt").read_text() == "a\n"


def test_a_transcript_denying_by_default(tmp_path: Path) -> None:
    code, out, env = invoke(tmp_path, "write a", "gemini")
    assert code == 0
    lines = out.splitlines()
    assert lines[1:3] == ["> write a", "Writing."]
    assert "[edit] edit: Writing to a.txt" in lines
    assert "  ? permission: Reject" in lines
    assert "  -> cancelled: rejected: permission not given (Reject)" in lines
    assert lines[-1].startswith("-- ok (end_turn)")
    assert not (env.workspace / "a.txt").exists()


def test_an_agent_that_cannot_start(tmp_path: Path) -> None:
    code, _, _ = invoke(tmp_path, "hi", str(tmp_path / "no-such-agent"))
    assert code == 4
    runner = CliRunner()
    result = runner.invoke(
        main, ["acp", "--json", "hi", sys.executable, "-c", "import sys; sys.exit(3)"]
    )
    assert result.exit_code == 1
    (event,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert event["type"] == "turn_completed"
    assert event["error"]["kind"] == "crashed"


def test_a_person_answers_the_permission_prompt_at_the_keyboard(
    tmp_path: Path, terminal: Callable[..., Any]
) -> None:
    with ScriptedModel(WRITE) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        environ = env.environ()
        environ.pop("NO_COLOR", None)
        argv = [GEMWIRE, "acp", "--cwd", str(env.workspace), "write a", "--"]
        screen = terminal(
            [*argv, *pinned_gemini_command(), "--acp"], environ, keys=[(b"Esc cancels", b"y")]
        )
    assert screen.exit_code == 0
    lines = screen.lines
    start = lines.index("? acp:gemini-cli asks permission for Writing to a.txt")
    # y takes the first allow-once option, never the always option listed before it.
    # The change asked about, then the options the agent offered.
    assert lines[start + 1 : start + 7] == [
        *diff_of_a(env),
        "  1 Allow for this session   2 Allow   3 Reject",
        "    → Allow",
    ]
    assert (env.workspace / "a.txt").read_text() == "a\n"
    assert "Done." in lines


def test_ctrl_c_at_the_permission_prompt_exits_130_at_once(
    tmp_path: Path, terminal: Callable[..., Any]
) -> None:
    # The question used to wait for its key in a thread: Ctrl-C cancelled the turn, then the
    # process hung on that thread's read until a key came (and a spinner line was left).
    with ScriptedModel(WRITE) as model:
        env = IsolatedGemini(model.url, root=tmp_path)
        environ = env.environ()
        environ.pop("NO_COLOR", None)
        argv = [GEMWIRE, "acp", "--cwd", str(env.workspace), "write a", "--"]
        screen = terminal(
            [*argv, *pinned_gemini_command(), "--acp"],
            environ,
            keys=[(b"Esc cancels", signal.SIGINT)],
        )
    assert screen.exit_code == 130
    lines = screen.lines
    assert "Traceback" not in screen.text
    start = lines.index("? acp:gemini-cli asks permission for Writing to a.txt")
    assert lines[start + 1 : start + 7] == [
        *diff_of_a(env),
        "  1 Allow for this session   2 Allow   3 Reject",
        "    → cancelled",
    ]
    assert lines[-2].startswith("✗ failed (cancelled) · 1 tool call · ")
    assert lines[-1].startswith("  cancelled: ")
    assert not any("working" in line for line in lines)  # no spinner left behind
    assert not (env.workspace / "a.txt").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="Claude Code refuses only as root")
def test_claude_as_root_outside_a_sandbox_says_why_it_failed(tmp_path: Path) -> None:
    # claude-code-acp 0.16.2 said only "Query closed before response received".
    with ScriptedModel(Scenario(turns=[Reply([Text("Hi.")])])) as model:
        env = isolated_agent("claude", model, root=tmp_path, version="0.16.2")
        argv = [GEMWIRE, "acp", "--agent", "claude", "--json", "--cwd", str(env.workspace), "go"]
        environ = env.environ({"IS_SANDBOX": "yes"})
        done = subprocess.run(argv, check=False, env=environ, capture_output=True, timeout=150)
        assert env.live_processes() == []
    assert done.returncode == 1
    (turn,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert (turn["type"], turn["stop_reason"], turn["error"]["kind"]) == (
        "turn_completed",
        "error",
        "agent",
    )
    assert turn["error"]["message"] == (
        "session/new: Internal error: Query closed before response received (as root, Claude "
        "Code exits when it may skip permission checks (claude-code-acp allows that whenever "
        "IS_SANDBOX is set), unless IS_SANDBOX=1 says it runs in a sandbox; fix: set "
        "IS_SANDBOX=1 (in a container or VM you trust), or unset IS_SANDBOX, or run as a user "
        "other than root)"
    )
