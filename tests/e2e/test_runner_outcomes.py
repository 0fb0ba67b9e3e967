"""The corpus cases through run_gemini: each ends in the typed outcome the CLI's behaviour means."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from kit.corpus import CASES

from gemwire import run_gemini
from gemwire.events import Notice, ToolCallFinished
from gemwire.testing import IsolatedGemini, ScriptedModel, load_case

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


# case -> (ok, stop_reason, error kind, exit code, failed tool error types)
EXPECTED = {
    "tool_error_missing_file": (True, "end_turn", None, 0, ["file_not_found"]),
    "unknown_tool": (True, "end_turn", None, 0, ["tool_not_registered"]),
    "default_mode_write_denied": (True, "end_turn", None, 0, ["tool_not_registered"]),
    "policy_violation_shell": (True, "end_turn", None, 0, ["policy_violation"]),
    "persistent_500": (False, "error", "api", 244, []),
    "invalid_api_key": (False, "error", "auth", 144, []),
    "max_session_turns": (False, "max_turn_requests", "turn_limit", 53, []),
    "loop_detection": (True, "max_turn_requests", None, 0, []),
    "empty_response": (False, "error", "api", 0, []),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_case_outcome(name: str, tmp_path: Path) -> None:
    case = load_case(CASES / f"{name}.json")
    (cli_run,) = case.runs
    with ScriptedModel(case.scenario) as model:
        env = IsolatedGemini(
            model.url, files=case.scenario.files, settings=case.settings, root=tmp_path
        )
        options = env.gemini_options()
        # The case's CLI flags, as options.
        args = list(cli_run.args)
        if "--approval-mode" in args:
            options = msgspec.structs.replace(
                options, approval_mode=args[args.index("--approval-mode") + 1]
            )
        if "--allowed-tools" in args:
            options = msgspec.structs.replace(
                options, allowed_tools=(args[args.index("--allowed-tools") + 1],)
            )
        async with run_gemini(cli_run.prompt, options) as run:
            events = [event async for event in run]
    result = run.result
    ok, stop_reason, kind, exit_code, tool_errors = EXPECTED[name]
    assert (
        result.ok,
        result.stop_reason,
        result.error.kind if result.error else None,
        result.exit_code,
    ) == (
        ok,
        stop_reason,
        kind,
        exit_code,
    )
    if result.error is not None:
        assert result.error.exit_code == exit_code
    assert [
        e.error.type for e in events if isinstance(e, ToolCallFinished) and e.error
    ] == tool_errors
    if name == "loop_detection":
        assert [e.message for e in events if isinstance(e, Notice)] == [
            "Loop detected, stopping execution"
        ]
    assert env.live_processes() == []
