"""The runner against a fake gemini that misbehaves: it always ends cleanly, with one turn_completed."""

from __future__ import annotations

import gc
import sys
import time
import tracemalloc
from pathlib import Path

import msgspec
import pytest

from gemwire import GeminiOptions, RateLimited, RunResult, run_gemini
from gemwire._transport import process
from gemwire.events import Event, MessageDelta, Notice, TurnCompleted, TurnError, Unknown
from gemwire.runners.turn_result import MAX_KEPT_NOTICES

pytestmark = pytest.mark.anyio

FAKE = Path(__file__).with_name("fake_gemini.py")


async def run(mode: str, tmp_path: Path, **options: object) -> tuple[list[Event], RunResult]:
    launcher = tmp_path / "gemini"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    launcher.chmod(0o755)
    opts = GeminiOptions(
        executable=str(launcher), cwd=str(tmp_path), env={"FAKE_GEMINI_MODE": mode}
    )
    async with run_gemini("hi", msgspec.structs.replace(opts, **options)) as handle:
        events: list[Event] = [event async for event in handle]
    assert sum(isinstance(e, TurnCompleted) for e in events) == 1
    assert isinstance(events[-1], TurnCompleted)
    return events, handle.result


async def test_a_100_mb_stderr_flood_while_stdout_idles(tmp_path: Path) -> None:
    _, result = await run("stderr_flood", tmp_path)
    assert (result.ok, result.answer) == (True, "survived")
    assert result.stderr_tail.count("\n") == 199  # the last 200 lines, not 100 MB
    assert len(result.stderr_tail) < 250_000


async def test_a_key_straddling_the_64_kib_cut_of_a_stderr_line_is_masked(tmp_path: Path) -> None:
    key = "AIzaSyFAKEFAKEFAKEFAKEFAKE0123456789"
    env = {"FAKE_GEMINI_MODE": "secret_across_cut", "GEMINI_API_KEY": key}
    events, result = await run("secret_across_cut", tmp_path, env=env)
    assert result.ok
    assert key[-10:] not in result.stderr_tail
    assert result.stderr_tail.splitlines() == ["x" * 2000, "x" * 2000]  # each cut for the tail
    assert not any(key[-10:] in msgspec.json.encode(e).decode() for e in events)


async def test_a_64_mb_line_is_decoded(tmp_path: Path) -> None:
    events, result = await run("long_line", tmp_path)
    deltas = [e for e in events if isinstance(e, MessageDelta)]
    assert [len(d.text) for d in deltas] == [64_000_000, 5]
    assert result.ok


async def test_a_64_mb_line_over_the_cap_is_a_notice_and_the_run_goes_on(tmp_path: Path) -> None:
    events, result = await run("long_line", tmp_path, max_line_bytes=1 << 20)
    notices = [e.message for e in events if isinstance(e, Notice)]
    size = (
        len('{"type":"message","timestamp":"t","role":"assistant","content":"","delta":true}')
        + 64_000_000
    )
    assert notices == [f"skipped a {size}-byte line: over the 1048576-byte limit"]
    assert (result.ok, result.answer) == (True, "after")


async def test_a_crash_mid_line_keeps_the_partial_answer(tmp_path: Path) -> None:
    events, result = await run("crash_mid_line", tmp_path)
    assert isinstance(events[-2], Unknown)
    assert events[-2].raw == '{"type":"message","timestamp":"t","ro'
    assert result.answer == "partial"
    assert result.error == TurnError(
        kind="crashed", message="the agent exited with code -9 without a result", exit_code=-9
    )


async def test_exit_0_with_nothing_on_stdout(tmp_path: Path) -> None:
    events, result = await run("empty_exit0", tmp_path)
    assert [e.type for e in events] == ["turn_completed"]
    assert result.error == TurnError(
        kind="crashed", message="the agent exited without a result", exit_code=0
    )


async def test_the_cli_starts_as_one_process_unless_the_environment_says_otherwise(
    tmp_path: Path,
) -> None:
    alone = {"FAKE_GEMINI_MODE": "say_relaunch"}
    _, result = await run("say_relaunch", tmp_path, env=alone, inherit_env=False)
    assert result.answer == "relaunch='1'"
    kept = {**alone, "GEMINI_CLI_NO_RELAUNCH": ""}
    _, result = await run("say_relaunch", tmp_path, env=kept, inherit_env=False)
    assert result.answer == "relaunch=''"


async def test_a_good_result_survives_a_nonzero_exit(tmp_path: Path) -> None:
    _, result = await run("result_then_exit_3", tmp_path)
    assert (result.ok, result.answer, result.exit_code, result.session_id) == (
        True,
        "fine",
        3,
        "fake-session",
    )


async def test_sigterm_ignored_still_ends_at_the_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(process, "TERMINATE_GRACE", 0.2)  # it is waited out: keep it short
    started = time.monotonic()
    _, result = await run("ignore_term", tmp_path, timeout=2)
    assert result.error == TurnError(
        kind="timeout", message="the run took longer than 2 s", exit_code=-9
    )
    assert time.monotonic() - started < 2 + 0.2 + 3  # deadline, TERM grace, slack


async def test_output_after_the_result_comes_before_turn_completed(tmp_path: Path) -> None:
    events, result = await run("output_after_result", tmp_path)
    assert [e.type for e in events][-4:] == ["usage", "message_delta", "notice", "turn_completed"]
    assert result.answer == "answer"


async def test_a_newer_cli_than_tested_is_announced(tmp_path: Path) -> None:
    package = tmp_path / "node_modules" / "@google" / "gemini-cli"
    package.mkdir(parents=True)
    (package / "package.json").write_text('{"name": "@google/gemini-cli", "version": "9.0.0"}')
    launcher = package / "gemini"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    launcher.chmod(0o755)
    opts = GeminiOptions(
        executable=str(launcher), cwd=str(tmp_path), env={"FAKE_GEMINI_MODE": "result_then_exit_3"}
    )
    async with run_gemini("hi", opts) as handle:
        events = [event async for event in handle]
    message = "Gemini CLI 9.0.0 is newer than the versions gemwire is tested against; unknown output is kept as unknown events"
    assert events[0] == Notice(
        agent="gemini", session_id=None, severity="warning", message=message, source="gemwire"
    )
    assert handle.result.notices == [events[0]]


async def test_tool_arguments_nested_3000_deep_and_invalid_utf8_end_in_one_turn(
    tmp_path: Path,
) -> None:
    events, result = await run("deep_tool_arguments", tmp_path)
    unknown = [e for e in events if isinstance(e, Unknown)]
    assert [(u.upstream_type, u.raw[:40]) for u in unknown] == [
        (None, '{"type":"tool_use","timestamp":"t","tool')
    ]
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert notices == ["replaced 1 invalid UTF-8 byte(s) in the agent's output"]
    assert (result.ok, result.answer) == (True, "café\ufffdafter")


async def test_wait_consumes_the_run_and_returns_its_result(tmp_path: Path) -> None:
    launcher = tmp_path / "gemini"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    launcher.chmod(0o755)
    env = {"FAKE_GEMINI_MODE": "output_after_result"}
    async with run_gemini("hi", GeminiOptions(executable=str(launcher), env=env)) as handle:
        result = await handle.wait()
    assert isinstance(result, RunResult)
    assert (result.ok, result.answer) == (True, "answer")


# What a run keeps is the runner's, not the event loop's: one backend (the file's other tests
# run the same pipes on trio too). Under tracemalloc this is the suite's slowest unit of work.
@pytest.mark.anyio_backends("asyncio")
async def test_a_long_run_keeps_its_result_not_its_events(tmp_path: Path) -> None:
    launcher = tmp_path / "gemini"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    launcher.chmod(0o755)
    env = {"FAKE_GEMINI_MODE": "long_run"}
    gc.collect()
    tracemalloc.start()
    try:
        async with run_gemini("hi", GeminiOptions(executable=str(launcher), env=env)) as handle:
            result = await handle.wait()
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # 50,000 events kept would be 12 MB.
    assert held < 3_000_000, held
    assert (result.ok, result.answer) == (True, "done")
    notices = [n.message for n in result.notices]
    assert len(notices) == MAX_KEPT_NOTICES
    assert notices[0] == "Attempt 6 failed: boom. Retrying..."
    assert notices[-1] == "Attempt 1005 failed: boom. Retrying..."


async def test_killed_while_retrying_429s_is_rate_limited_with_google_s_delay(
    tmp_path: Path,
) -> None:
    _, result = await run("killed_while_retrying", tmp_path)
    assert result.error == TurnError(
        kind="rate_limited",
        message="rate limited: Gemini CLI was retrying (Attempt 1 failed with status 429) "
        "when the run ended: the agent exited with code -9 without a result",
        exit_code=-9,
        retry_delay=12.0,
    )
    with pytest.raises(RateLimited) as caught:
        result.raise_for_error()
    assert caught.value.retry_delay == 12.0


async def test_half_an_emoji_in_an_answer_chunk_arrives_as_u_fffd_with_a_notice(
    tmp_path: Path,
) -> None:
    events, result = await run("lone_surrogate", tmp_path)
    message = (
        "replaced 1 lone UTF-16 surrogate(s) in the agent's output with U+FFFD"
        " (half of a character, e.g. an emoji cut in two)"
    )
    assert events[1:4] == [
        Notice(
            agent="gemini",
            session_id="fake-session",
            severity="warning",
            message=message,
            source="gemwire",
        ),
        MessageDelta(agent="gemini", session_id="fake-session", text="big \ufffd"),
        MessageDelta(agent="gemini", session_id="fake-session", text=" done"),
    ]
    assert (result.ok, result.answer) == (True, "big \ufffd done")
