"""The ACP client over the in-memory channel: router, turns and serving, with no process.

Each test runs `AcpClient` against a `gemwire.testing.ScriptedAgent` that speaks
JSON-RPC in this process.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings, strategies as st

from gemwire.events import (
    Event,
    MessageDelta,
    Notice,
    PermissionRequested,
    PermissionResolved,
    TurnCompleted,
    TurnError,
)
from gemwire.runners.acp import (
    AcpClient,
    AcpOptions,
    AcpSession,
    PermissionRequest,
    memory_channel_pair,
)
from gemwire.runners.acp.channel import MEMORY_BUFFER
from gemwire.runners.acp.events import MAX_QUEUED_EVENTS
from gemwire.runners.acp.gemini_cli import GeminiCliQuirks
from gemwire.runners.acp.quirks import NoQuirks, quirks_for
from gemwire.runners.agents import AGENTS, agent_identity
from gemwire.testing import AgentScenario, ScriptedAgent, scripted_client
from gemwire.wire import acp

pytestmark = pytest.mark.anyio


def kinds(events: list[Event]) -> list[str]:
    return [e.type for e in events]


async def run_turn(client: AcpClient, prompt: str = "go") -> tuple[list[Event], Any]:
    session = await client.new_session()
    async with session.prompt(prompt) as turn:
        events = [event async for event in turn]
    return events, turn.result


async def test_a_prompt_streams_its_updates_to_one_turn_completed() -> None:
    async def on_prompt(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
        assert params["prompt"] == [{"type": "text", "text": "hello"}]
        for text in ("Hel", "lo ", "world"):
            await agent.say(sid, text)
        return "end_turn"

    async with scripted_client(on_prompt=on_prompt) as (client, _):
        events, result = await run_turn(client, "hello")
    assert kinds(events) == [
        "session_started",
        "user_message",
        "message_delta",
        "message_delta",
        "message_delta",
        "turn_completed",
    ]
    assert [e.text for e in events if isinstance(e, MessageDelta)] == ["Hel", "lo ", "world"]
    assert {e.agent for e in events} == {"acp:scripted"}
    assert (result.ok, result.answer, result.stop_reason) == (True, "Hello world", "end_turn")
    assert (result.stderr_tail, result.exit_code) == ("", None)
    assert client.stderr_tail == ""


async def test_the_client_needs_a_command_only_without_a_channel() -> None:
    with pytest.raises(ValueError, match="command is empty"):
        AcpClient(AcpOptions())
    client_end, agent_end = memory_channel_pair()
    async with client_end, agent_end:
        AcpClient(AcpOptions(), channel=client_end)  # no process to name


async def test_an_agent_that_closes_the_channel_mid_turn_crashes_the_turn_once() -> None:
    async def on_prompt(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
        await agent.say(sid, "partial")
        await agent.channel.close(0, reason="agent shutting down")
        return "end_turn"  # never reaches the client

    async with scripted_client(on_prompt=on_prompt) as (client, _):
        events, result = await run_turn(client)
        assert not client.running
    assert kinds(events)[-2:] == ["message_delta", "turn_completed"]
    assert kinds(events).count("turn_completed") == 1
    completed = events[-1]
    assert isinstance(completed, TurnCompleted)
    assert completed.error is not None
    assert (completed.error.kind, completed.error.message, completed.error.exit_code) == (
        "crashed",
        "the agent closed the connection (agent shutting down) before answering session/prompt",
        None,
    )
    assert (result.ok, result.answer) == (False, "partial")


async def test_garbage_from_the_agent_is_a_notice_and_the_turn_goes_on() -> None:
    async def on_prompt(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
        await agent.channel.send(b"this is not json\n")
        await agent.channel.send(b'{"jsonrpc":"1.0","method":"x"}')
        await agent.say(sid, "still here")
        return "end_turn"

    async with scripted_client(on_prompt=on_prompt) as (client, _):
        events, result = await run_turn(client)
    assert kinds(events) == [
        "session_started",
        "user_message",
        "notice",
        "notice",
        "message_delta",
        "turn_completed",
    ]
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert notices[0].startswith("protocol violation: not a JSON-RPC message: ")
    assert notices[0].endswith(": this is not json")
    assert notices[1] == (
        'protocol violation: not JSON-RPC 2.0 ("jsonrpc" is not "2.0"): '
        '{"jsonrpc":"1.0","method":"x"}'
    )
    assert (result.ok, result.answer) == (True, "still here")


async def most_session_news_at_once(name: str) -> int:
    """Two `new_session` at once on an agent called ``name``: how many ``session/new``
    the agent saw waiting together (it holds each until a second comes, or 0.3 s)."""
    waiting = most = 0
    both = anyio.Event()

    async def on_new_session(agent: ScriptedAgent, number: int) -> None:
        nonlocal waiting, most
        waiting += 1
        most = max(most, waiting)
        if waiting == 2:
            both.set()
        with anyio.move_on_after(0.3):
            await both.wait()
        waiting -= 1

    scenario = AgentScenario(agent_info=acp.Implementation(name=name, version="1.0"))
    async with scripted_client(scenario=scenario, on_new_session=on_new_session) as (client, _):
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.new_session)
            tg.start_soon(client.new_session)
        assert sorted(client.sessions) == ["s0", "s1"]
    return most


@pytest.mark.parametrize(("name", "expected"), [("gemini-cli", 1), ("qwen-code", 2)])
async def test_gemini_opens_one_session_at_a_time_and_no_other_agent_does(
    name: str, expected: int
) -> None:
    assert await most_session_news_at_once(name) == expected


@pytest.mark.parametrize("name", [spec.reported_name for spec in AGENTS.values()])
def test_only_gemini_cli_gets_gemini_quirks(name: str) -> None:
    quirks = quirks_for(agent_identity((), name))
    assert isinstance(quirks, GeminiCliQuirks) == (name == "gemini-cli")
    assert isinstance(quirks, NoQuirks) == (name != "gemini-cli")


def test_an_agent_that_gives_no_name_gets_the_quirks_of_its_built_in_spec() -> None:
    assert isinstance(quirks_for(agent_identity(("/opt/bin/gemini", "--acp"))), GeminiCliQuirks)
    assert isinstance(quirks_for(agent_identity(("my-agent",))), NoQuirks)


PERMISSION = {
    "toolCall": {"toolCallId": "t1", "title": "Write a.txt", "kind": "edit"},
    "options": [
        {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
        {"optionId": "no", "name": "Reject", "kind": "reject_once"},
    ],
}


async def test_a_permission_request_is_answered_by_the_handler() -> None:
    answers: list[dict[str, Any]] = []
    asked: list[PermissionRequest] = []

    async def on_prompt(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
        params = {"sessionId": sid, **PERMISSION}
        answers.append(await agent.request("session/request_permission", params))
        await agent.update(sid, "tool_call_update", toolCallId="t1", status="completed")
        return "end_turn"

    async def handler(request: PermissionRequest) -> str | None:
        asked.append(request)
        return "yes"

    async with scripted_client(on_prompt=on_prompt, permission_handler=handler) as (client, _):
        events, result = await run_turn(client)
    outcome = {"outcome": "selected", "optionId": "yes"}
    assert answers == [{"jsonrpc": "2.0", "id": 0, "result": {"outcome": outcome}}]
    assert [(r.session_id, r.call_id, r.title, r.kind) for r in asked] == [
        ("s0", "t1", "Write a.txt", "edit")
    ]
    assert [o.option_id for o in asked[0].options] == ["yes", "no"]
    assert kinds(events) == [
        "session_started",
        "user_message",
        "tool_call_started",
        "permission_requested",
        "permission_resolved",
        "tool_call_finished",
        "turn_completed",
    ]
    resolved = events[4]
    assert isinstance(resolved, PermissionResolved)
    assert (resolved.request_id, resolved.call_id, resolved.option_id) == ("0", "t1", "yes")
    assert result.ok


async def test_a_permission_request_shows_the_proposed_change_with_secrets_masked() -> None:
    secret = "sk-live-0123456789abcdef"
    diff = {"type": "diff", "path": "/w/.env", "oldText": "KEY=\n", "newText": f"KEY={secret}\n"}
    note = {"type": "content", "content": {"type": "text", "text": f"store {secret}"}}
    asked: list[PermissionRequest] = []

    async def on_prompt(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
        call = {"toolCallId": "t1", "title": "Write .env", "kind": "edit", "content": [diff, note]}
        request = {"sessionId": sid, "toolCall": call, "options": PERMISSION["options"]}
        await agent.request("session/request_permission", request)
        return "end_turn"

    async def handler(request: PermissionRequest) -> str | None:
        asked.append(request)
        return "no"

    options = AcpOptions(env={"SERVICE_API_KEY": secret})
    async with scripted_client(options, on_prompt=on_prompt, permission_handler=handler) as (
        client,
        _,
    ):
        events, _result = await run_turn(client)
    (requested,) = [e for e in events if isinstance(e, PermissionRequested)]
    change = "--- /w/.env\n+++ /w/.env\n@@ -1 +1 @@\n-KEY=\n+KEY=***\n"
    assert (requested.title, requested.kind, requested.diff, requested.content) == (
        "Write .env",
        "edit",
        change,
        "store ***",
    )
    assert [(r.title, r.diff, r.content) for r in asked] == [("Write .env", change, "store ***")]


async def test_a_permission_request_while_cancelling_is_answered_cancelled() -> None:
    answers: list[dict[str, Any]] = []

    async def on_prompt(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
        await agent.say(sid, "Working")
        await agent.cancelled.wait()
        params = {"sessionId": sid, **PERMISSION}
        answers.append(await agent.request("session/request_permission", params))
        return "cancelled"

    async def handler(request: PermissionRequest) -> str | None:
        raise AssertionError("not asked while the turn is cancelled")

    async with scripted_client(on_prompt=on_prompt, permission_handler=handler) as (client, _):
        session = await client.new_session()
        async with session.prompt("go") as turn:
            async for event in turn:
                if isinstance(event, MessageDelta):
                    await turn.cancel()
    assert answers == [{"jsonrpc": "2.0", "id": 0, "result": {"outcome": {"outcome": "cancelled"}}}]
    assert turn.result.stop_reason == "cancelled"


async def test_files_are_served_inside_the_session_folders_only(tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    outside = tmp_path / "outside.txt"
    answers: list[dict[str, Any]] = []

    async def on_prompt(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
        for method, fields in [
            ("fs/write_text_file", {"path": str(folder / "a.txt"), "content": "inside"}),
            ("fs/read_text_file", {"path": str(folder / "a.txt")}),
            ("fs/write_text_file", {"path": str(outside), "content": "escaped"}),
            (
                "fs/write_text_file",
                {"path": str(folder / ".." / "outside.txt"), "content": "escaped"},
            ),
            ("fs/read_text_file", {"path": "/etc/passwd"}),
        ]:
            answer = await agent.request(method, {"sessionId": sid, **fields})
            answers.append(answer["result"] if "result" in answer else answer["error"])
        return "end_turn"

    options = AcpOptions(cwd=str(folder), serve_reads=True)
    async with scripted_client(options, on_prompt=on_prompt) as (client, _):
        events, result = await run_turn(client)

    def refused(path: str) -> dict[str, Any]:
        return {
            "code": -32602,
            "message": f"outside the session's folders: {path}",
            "data": {"path": path},
        }

    escaped = str(folder / ".." / "outside.txt")
    assert answers == [
        {},
        {"content": "inside"},
        refused(str(outside)),
        refused(escaped),
        refused("/etc/passwd"),
    ]
    assert (folder / "a.txt").read_text() == "inside"
    assert not outside.exists()
    assert kinds(events) == [
        "session_started",
        "user_message",
        "notice",
        "notice",
        "notice",
        "turn_completed",
    ]
    assert [e.message for e in events if isinstance(e, Notice)] == [
        f"denied the agent's fs/write_text_file: outside the session's folders: {outside}",
        f"denied the agent's fs/write_text_file: outside the session's folders: {escaped}",
        "denied the agent's fs/read_text_file: outside the session's folders: /etc/passwd",
    ]
    assert result.ok


async def test_a_client_that_does_not_serve_reads_refuses_them(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("secret")
    answers: list[dict[str, Any]] = []

    async def on_prompt(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
        fields = {"sessionId": sid, "path": str(tmp_path / "a.txt")}
        answers.append(await agent.request("fs/read_text_file", fields))
        return "end_turn"

    async with scripted_client(AcpOptions(cwd=str(tmp_path)), on_prompt=on_prompt) as (client, _):
        await run_turn(client)
    error = {"code": -32601, "message": "this client does not offer fs/read_text_file"}
    assert answers == [{"jsonrpc": "2.0", "id": 0, "error": error}]


async def test_cancel_mid_turn_sends_one_cancel_and_ends_with_one_turn_completed() -> None:
    async def on_prompt(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
        await agent.say(sid, "Working")
        await agent.cancelled.wait()
        return "cancelled"

    async with scripted_client(on_prompt=on_prompt) as (client, agent):
        session = await client.new_session()
        events: list[Event] = []
        async with session.prompt("go") as turn:
            async for event in turn:
                events.append(event)
                if isinstance(event, MessageDelta):
                    await turn.cancel()
                    await session.cancel()  # a second cancel sends nothing
        sent = [m for m in agent.received if m.get("method") == "session/cancel"]
    assert sent == [{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s0"}}]
    assert kinds(events) == ["session_started", "user_message", "message_delta", "turn_completed"]
    completed = events[-1]
    assert isinstance(completed, TurnCompleted)
    assert (completed.stop_reason, completed.answer, completed.error) == (
        "cancelled",
        "Working",
        TurnError(kind="cancelled", message="the turn was cancelled"),
    )
    assert session.state.phase == "idle"


async def test_a_terminal_the_policy_refuses_is_answered_with_an_error() -> None:
    answers: list[dict[str, Any]] = []

    async def on_prompt(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
        params = {"sessionId": sid, "command": "rm", "args": ["-rf", "/"]}
        answers.append(await agent.request("terminal/create", params))
        return "end_turn"

    async with scripted_client(on_prompt=on_prompt, terminal_policy=lambda _: False) as (client, _):
        events, result = await run_turn(client)
    error = {"code": -32602, "message": "command not allowed by the terminal policy: rm"}
    assert answers == [{"jsonrpc": "2.0", "id": 0, "error": error}]
    assert kinds(events) == ["session_started", "user_message", "notice", "turn_completed"]
    assert [e.message for e in events if isinstance(e, Notice)] == [
        "denied the agent's terminal/create: command not allowed by the terminal policy: rm"
    ]
    assert result.ok


async def test_two_sessions_turns_at_once_each_get_exactly_their_own_events() -> None:
    """The agent writes to both sessions in lockstep, one chunk each in turn: the reader
    routes each update to its session's turn, never to the other."""
    chunks = 30
    steps = [anyio.Event() for _ in range(chunks)]
    arrived = [0] * chunks

    async def on_prompt(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
        for n in range(chunks):
            await agent.say(sid, f"{sid}:{n} ")
            arrived[n] += 1
            if arrived[n] == 2:
                steps[n].set()
            await steps[n].wait()  # the other session has said its chunk n too
        return "end_turn"

    streams: dict[str, list[Event]] = {}

    async def consume(session: AcpSession) -> None:
        async with session.prompt(f"hi {session.session_id}") as turn:
            streams[session.session_id] = [event async for event in turn]

    async with scripted_client(on_prompt=on_prompt) as (client, _):
        sessions = [await client.new_session(), await client.new_session()]
        async with anyio.create_task_group() as tg:
            for session in sessions:
                tg.start_soon(consume, session)
    assert sorted(streams) == ["s0", "s1"]
    for sid, events in streams.items():
        assert {e.session_id for e in events} == {sid}
        assert kinds(events) == [
            "session_started",
            "user_message",
            *["message_delta"] * chunks,
            "turn_completed",
        ]
        texts = [e.text for e in events if isinstance(e, MessageDelta)]
        assert texts == [f"{sid}:{n} " for n in range(chunks)]
        completed = events[-1]
        assert isinstance(completed, TurnCompleted)
        assert (completed.ok, completed.answer) == (True, "".join(texts))


async def test_a_consumer_that_stops_reading_holds_the_agent_back_in_bounded_memory() -> None:
    total = 20 * MAX_QUEUED_EVENTS
    said = 0

    async def on_prompt(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
        nonlocal said
        for n in range(total):
            await agent.say(sid, f"{n} ")
            said += 1
        return "end_turn"

    async with scripted_client(on_prompt=on_prompt) as (client, _):
        session = await client.new_session()
        async with session.prompt("flood") as turn:
            first = await anext(turn)
            await anyio.wait_all_tasks_blocked()  # nobody can go on: the agent waits for us
            # What the reader queued stops at the cap; what the agent got out, at the cap
            # plus what the channel holds (a pipe's buffer, for a process).
            held, out = len(session.queue), said
            texts = [event.text async for event in turn if isinstance(event, MessageDelta)]
    assert first.type == "session_started"
    assert held == MAX_QUEUED_EVENTS
    assert MAX_QUEUED_EVENTS - 2 <= out <= MAX_QUEUED_EVENTS + MEMORY_BUFFER
    assert texts == [f"{n} " for n in range(total)]  # then everything, in order
    assert turn.result.ok


@settings(max_examples=40, deadline=None)
@given(st.lists(st.binary(max_size=200) | st.text(max_size=200).map(str.encode), max_size=5))
def test_any_messages_mid_turn_leave_one_turn_completed_and_the_answer(
    garbage: list[bytes],
) -> None:
    async def on_prompt(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
        for message in garbage:
            await agent.channel.send(message)
        await agent.say(sid, "answer")
        return "end_turn"

    async def main() -> tuple[list[Event], Any]:
        async with scripted_client(on_prompt=on_prompt) as (client, _):
            return await run_turn(client)

    events, result = anyio.run(main)
    assert kinds(events).count("turn_completed") == 1
    assert kinds(events)[-2:] == ["message_delta", "turn_completed"]
    assert (result.ok, result.answer) == (True, "answer")
