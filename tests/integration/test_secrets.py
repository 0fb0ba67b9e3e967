"""Secret values of the agent's environment never leave gemwire: a fake gemini and a fake ACP
agent echo them on every channel, and every event, result and error comes out masked."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import msgspec
import pytest

from gemwire import GeminiOptions, RunFailed, RunResult, run_gemini
from gemwire.batch import BatchOptions, Task, read_results, run_batch_sync
from gemwire.errors import AgentRequestFailed
from gemwire.events import Event, MessageDelta, ToolCallFinished, ToolCallStarted, TurnCompleted
from gemwire.runners.acp import AcpClient, AcpOptions, PermissionRequest, run_acp

pytestmark = pytest.mark.anyio

FAKE_GEMINI = Path(__file__).with_name("fake_gemini.py")
FAKE_AGENT = Path(__file__).parent / "acp" / "fake_agent.py"
OPENAI_KEY = "sk-proj-FAKE0123456789abcdefghij"
GOOGLE_KEY = "AIzaSyGOOGLEFAKE0123456789abcdefghi"
ANTHROPIC_KEY = "sk-ant-api03-FAKE0123456789abcdef"
KEYS = {
    "OPENAI_API_KEY": OPENAI_KEY,
    "GOOGLE_API_KEY": GOOGLE_KEY,
    "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
}


def leaked(*things: object) -> list[str]:
    """The keys found anywhere in ``things`` (as JSON, or as text)."""
    text = "".join(
        thing if isinstance(thing, str) else msgspec.json.encode(thing).decode() for thing in things
    )
    return [key for key in KEYS.values() if key in text]


async def run_fake_gemini(mode: str, tmp_path: Path) -> tuple[list[Event], RunResult]:
    launcher = tmp_path / "gemini"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_GEMINI}" "$@"\n')
    launcher.chmod(0o755)
    env = {"FAKE_GEMINI_MODE": mode, **KEYS}
    options = GeminiOptions(executable=str(launcher), cwd=str(tmp_path), env=env)
    async with run_gemini("hi", options) as run:
        events = [event async for event in run]
    return events, run.result


async def test_keys_on_stdout_are_masked_in_noise_answer_and_result_error(tmp_path: Path) -> None:
    events, result = await run_fake_gemini("secrets_on_stdout", tmp_path)
    assert [(e.type, getattr(e, "message", getattr(e, "text", ""))) for e in events[1:-1]] == [
        ("notice", "OPENAI_API_KEY=***"),
        ("message_delta", "the key is ***"),
    ]
    completed = events[-1]
    assert isinstance(completed, TurnCompleted)
    assert completed.answer == "the key is ***"
    assert completed.error is not None
    assert completed.error.message == "API key not valid: ***"
    assert result.error == completed.error
    assert result.answer == "the key is ***"
    with pytest.raises(RunFailed) as caught:
        result.raise_for_error()
    assert str(caught.value) == "API key not valid: ***"
    assert leaked(events, result) == []


async def test_a_non_gemini_key_on_stderr_is_masked_in_turn_completed(tmp_path: Path) -> None:
    events, result = await run_fake_gemini("secret_on_stderr_exit_1", tmp_path)
    completed = events[-1]
    assert isinstance(completed, TurnCompleted)
    assert completed.error is not None
    assert (completed.error.message, completed.error.exit_code) == (
        "Error: invalid x-api-key ***",
        1,
    )
    assert result.stderr_tail == "Error: invalid x-api-key ***"
    assert leaked(events, result) == []


def acp_options(mode: str, tmp_path: Path) -> AcpOptions:
    return AcpOptions(
        command=(sys.executable, str(FAKE_AGENT)),
        cwd=str(tmp_path),
        env={"FAKE_ACP_MODE": mode, **KEYS},
        inherit_env=False,  # only these keys: the agent prints every *_KEY it has
    )


async def test_keys_in_an_acp_agents_tool_output_answer_and_stderr_are_masked(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(60):
        async with AcpClient(acp_options("env_tool", tmp_path)) as client:
            session = await client.new_session()
            async with session.prompt("env | grep _KEY") as turn:
                events = [event async for event in turn]
        # Read once the agent is gone and its stderr drained: while it runs, the stderr
        # line can still be in the pipe when the turn ends (stdout and stderr are two pipes).
        stderr_tail = client.stderr_tail
    assert [e.type for e in events] == [
        "session_started",
        "user_message",
        "tool_call_started",
        "tool_call_finished",
        "message_delta",
        "turn_completed",
    ]
    finished = events[3]
    assert isinstance(finished, ToolCallFinished)
    assert (finished.call_id, finished.status, finished.output) == (
        "env-1",
        "completed",
        "ANTHROPIC_API_KEY=***\nGOOGLE_API_KEY=***\nOPENAI_API_KEY=***\n",
    )
    assert events[4] == MessageDelta(
        agent="acp:scripted", session_id="fake-session", text="Your OpenAI key is ***."
    )
    assert turn.result.answer == "Your OpenAI key is ***."
    assert stderr_tail.splitlines()[-1] == "debug: using ***"
    assert leaked(events, turn.result, stderr_tail) == []


async def test_a_key_in_an_acp_prompt_error_is_masked_in_turn_completed(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with run_acp("hi", acp_options("prompt_error_secret", tmp_path)) as turn:
            events = [event async for event in turn]
    completed = events[-1]
    assert isinstance(completed, TurnCompleted)
    assert completed.error is not None
    assert (completed.error.kind, completed.error.message) == ("agent", "invalid key ***")
    assert turn.result.error == completed.error
    assert leaked(events, turn.result) == []


async def test_a_key_in_an_acp_error_is_masked_in_the_exception(tmp_path: Path) -> None:
    with anyio.fail_after(60), pytest.raises(AgentRequestFailed) as caught:
        async with AcpClient(acp_options("new_session_error_secret", tmp_path)) as client:
            await client.new_session()
    assert str(caught.value) == "cannot start: OPENAI_API_KEY=*** refused"
    assert caught.value.method == "session/new"


async def test_a_key_in_a_permission_request_is_masked_for_the_handler(tmp_path: Path) -> None:
    titles: list[str] = []

    async def handler(request: PermissionRequest) -> str | None:
        titles.append(request.title)
        return "no"

    options = acp_options("permission", tmp_path)
    options = msgspec.structs.replace(
        options, env={**options.env, "FAKE_ACP_TITLE": f"curl -u {OPENAI_KEY} x"}
    )
    with anyio.fail_after(60):
        async with AcpClient(options, permission_handler=handler) as client:
            session = await client.new_session()
            async with session.prompt("go") as turn:
                events = [event async for event in turn]
    assert titles == ["curl -u *** x"]
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [e.title for e in started] == ["curl -u *** x"]
    assert leaked(events, turn.result) == []


def test_a_batch_writes_results_and_events_with_the_keys_masked(tmp_path: Path) -> None:
    launcher = tmp_path / "gemini"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_GEMINI}" "$@"\n')
    launcher.chmod(0o755)
    gemini = GeminiOptions(
        executable=str(launcher), env={"FAKE_GEMINI_MODE": "secrets_on_stdout", **KEYS}
    )
    acp = acp_options("env_tool", tmp_path)
    for mode, options in (
        ("process", BatchOptions(gemini=gemini, max_attempts=1)),
        ("acp", BatchOptions(mode="acp", acp=acp, max_attempts=1)),
    ):
        out = tmp_path / mode
        run_batch_sync([Task(id="t", prompt="env | grep _KEY")], out, options)
        [result] = read_results(out)
        if mode == "process":
            assert result.error is not None
            assert (result.answer, result.error.message) == (
                "the key is ***",
                "API key not valid: ***",
            )
        else:
            assert result.answer == "Your OpenAI key is ***."
        written = [p for p in out.rglob("*.jsonl") if p.is_file()]
        assert {p.name for p in written} == {"results.jsonl", "t.jsonl"}
        assert all(leaked(p.read_text()) == [] for p in written)
        assert "***" in (out / "events" / "t.jsonl").read_text()
