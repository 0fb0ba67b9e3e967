"""Many sessions on one agent process, and inputs that must not stop the client."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio
import msgspec
import pytest

from gemwire.errors import AgentRequestFailed, RunTimedOut
from gemwire.events import Event, MessageDelta, Notice, TurnCompleted, Unknown
from gemwire.runners.acp import (
    AcpClient,
    AcpOptions,
    AcpSession,
    AcpTurnResult,
    TerminalRequest,
    run_acp,
)

pytestmark = pytest.mark.anyio

FAKE = Path(__file__).with_name("fake_agent.py")
SECRET = "AIzaSyFAKEFAKEFAKEFAKEFAKE0123456789"


def options(mode: str, tmp_path: Path, **changes: object) -> AcpOptions:
    base = AcpOptions(
        command=(sys.executable, str(FAKE)), cwd=str(tmp_path), env={"FAKE_ACP_MODE": mode}
    )
    return msgspec.structs.replace(base, **changes)


async def test_concurrent_turns_on_sessions_of_one_agent_each_get_exactly_their_events(
    tmp_path: Path,
) -> None:
    count, chunks = 5, 40
    env = {"FAKE_ACP_MODE": "interleave", "FAKE_ACP_SESSIONS": str(count)}
    env["FAKE_ACP_CHUNKS"] = str(chunks)
    streams: dict[str, list[Event]] = {}
    results: dict[str, AcpTurnResult] = {}

    async def one(session: AcpSession) -> None:
        async with session.prompt("hi") as turn:
            streams[session.session_id] = [event async for event in turn]
        results[session.session_id] = turn.result

    with anyio.fail_after(60):
        async with AcpClient(options("interleave", tmp_path, env=env)) as client:
            sessions = [await client.new_session() for _ in range(count)]
            async with anyio.create_task_group() as tg:
                for session in sessions:
                    tg.start_soon(one, session)
    assert sorted(streams) == [f"s{n}" for n in range(count)]
    for sid, events in streams.items():
        assert {e.session_id for e in events} == {sid}
        assert [e.type for e in events if e.type != "message_delta"] == [
            "session_started",
            "user_message",
            "turn_completed",
        ]
        texts = [e.text for e in events if isinstance(e, MessageDelta)]
        assert texts == [f"{sid}:{n} " for n in range(chunks)]
        assert results[sid].answer == "".join(texts)
        assert results[sid].ok


async def test_a_turn_the_agent_ended_keeps_its_events_until_its_caller_reads_them(
    tmp_path: Path,
) -> None:
    # A batch took client.take_events() for a new session while another session's turn had
    # ended but not been read: it took that turn's turn_completed, whose reader then waited
    # for ever (1 task in 1,000 under load).
    env = {"FAKE_ACP_MODE": "interleave", "FAKE_ACP_SESSIONS": "2", "FAKE_ACP_CHUNKS": "3"}
    with anyio.fail_after(60):
        async with AcpClient(options("interleave", tmp_path, env=env)) as client:
            first, second = [await client.new_session() for _ in range(2)]
            async with first.prompt("hi") as one, second.prompt("hi") as two:
                while not (one.done and two.done):  # noqa: ASYNC110 - no public event to wait on
                    await anyio.sleep(0.01)
                assert client.take_events() == []
                assert second.take_events() == []
                events = [event async for event in two]
                await one.wait()
    assert [e.type for e in events] == [
        "session_started",
        "user_message",
        "message_delta",
        "message_delta",
        "message_delta",
        "turn_completed",
    ]
    assert {e.session_id for e in events} == {"s1"}
    assert two.result.ok
    assert two.result.answer == "s1:0 s1:1 s1:2 "


async def test_a_turn_left_early_leaves_nothing_for_the_next_turn(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with AcpClient(options("echo", tmp_path)) as client:
            session = await client.new_session()
            async with session.prompt("one") as turn:
                while not turn.done:  # noqa: ASYNC110 - no public event to wait on
                    await anyio.sleep(0.01)
                first = await turn.__anext__()
            assert first.type == "session_started"
            assert session.take_events() == []
            async with session.prompt("two") as turn:
                events = [event async for event in turn]
    assert [e.type for e in events] == ["user_message", "message_delta", "turn_completed"]
    assert turn.result.answer == "echo: two"


async def test_undecodable_frames_become_records_and_the_turn_goes_on(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with run_acp("hi", options("bad_frames", tmp_path, timeout=30)) as turn:
            events = [event async for event in turn]
    assert sum(isinstance(e, TurnCompleted) for e in events) == 1
    assert turn.result.ok
    assert turn.result.answer == "still here"
    unknown = [e for e in events if isinstance(e, Unknown)]
    assert [e.upstream_type for e in unknown] == ["agent_message_chunk", "_x"]
    assert "bad \ufffd\ufffd utf-8" in unknown[0].raw
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert len(notices) == 2
    assert all(n.startswith("protocol violation: not a JSON-RPC message: ") for n in notices)


async def test_undecodable_frames_before_initialize_do_not_stop_it(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with run_acp("hi", options("bad_init", tmp_path)) as turn:
            events = [event async for event in turn]
    assert turn.result.ok
    assert [e.type for e in events][:3] == ["session_started", "unknown", "notice"]


async def test_an_agent_that_never_answers_initialize_times_out(tmp_path: Path) -> None:
    started = time.monotonic()
    with anyio.fail_after(60), pytest.raises(RunTimedOut) as caught:
        async with AcpClient(options("mute", tmp_path, request_timeout=1.0)):
            pass
    assert str(caught.value) == "the agent did not answer initialize within 1 s"
    assert time.monotonic() - started < 30


async def test_a_stderr_flood_without_newlines_is_read_in_linear_time(tmp_path: Path) -> None:
    env = {"FAKE_ACP_MODE": "stderr_flood", "FAKE_ACP_STDERR_MB": "64"}
    started = time.monotonic()
    with anyio.fail_after(120):
        async with run_acp("hi", options("stderr_flood", tmp_path, env=env)) as turn:
            result = await turn.wait()
    assert result.ok
    assert result.answer == "done"
    assert time.monotonic() - started < 100  # quadratic re-splitting: minutes
    assert len(result.stderr_tail) < 200 * 2001


async def test_credentials_echoed_in_an_agent_error_are_masked(tmp_path: Path) -> None:
    with anyio.fail_after(60), pytest.raises(AgentRequestFailed) as caught:
        async with AcpClient(
            options("echo_secret", tmp_path, auth_method="gemini-api-key"),
            credentials={"api-key": SECRET},
        ):
            pass
    assert str(caught.value) == "invalid key ***"
    assert caught.value.data == {"key": "***"}
    assert caught.value.method == "authenticate"


async def test_the_terminal_policy_sees_the_environment_the_agent_asks_for(
    tmp_path: Path,
) -> None:
    asked: list[TerminalRequest] = []

    def policy(request: TerminalRequest) -> bool:
        asked.append(request)
        return not any(name.startswith("GIT_CONFIG") for name in request.env)

    with anyio.fail_after(60):
        async with run_acp("hi", options("terminal_env", tmp_path), terminal_policy=policy) as turn:
            events = [event async for event in turn]
    assert [(r.argv, r.env) for r in asked] == [(("sh", "-c", "env"), {"GIT_CONFIG_COUNT": "1"})]
    replies = [e.text for e in events if isinstance(e, MessageDelta)]
    assert replies == [
        (
            'reply terminal/create: {"error": {"code": -32602, "message": '
            '"command not allowed by the terminal policy: sh with GIT_CONFIG_COUNT"}}'
        )
    ]


async def test_terminals_get_only_the_options_environment_without_inherit_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMWIRE_HOST_ONLY", "leak")
    env = {"FAKE_ACP_MODE": "terminal_env", "PATH": os.environ["PATH"], "MINE": "1"}
    with anyio.fail_after(60):
        async with run_acp(
            "hi",
            options("terminal_env", tmp_path, env=env, inherit_env=False),
            terminal_policy=lambda request: True,
        ) as turn:
            events = [event async for event in turn]
    output = next(e.text for e in events if isinstance(e, MessageDelta) and "output" in e.text)
    assert "GEMWIRE_HOST_ONLY" not in output
    assert "MINE=1" in output
    assert "GIT_CONFIG_COUNT=1" in output


async def test_the_client_knows_when_the_agent_died_and_which_sessions_went_with_it(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(60):
        async with AcpClient(options("crash_mid_request", tmp_path)) as client:
            session = await client.new_session()
            before = (client.running, session.lost)
            async with session.prompt("hi") as turn:
                result = await turn.wait()
            assert await client.wait_exited() == -9
            assert before == (True, False)
            assert (client.running, session.lost) == (False, True)
            assert list(client.sessions) == [session.session_id]
    assert result.error is not None
    assert (result.error.kind, result.exit_code) == ("crashed", -9)
