"""The ACP client over the in-memory channel: router, turns and serving, with no process.

Each test runs `AcpClient` against a `ScriptedAgent` (acp_scripted.py) that speaks
JSON-RPC in this process.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from acp_scripted import ScriptedAgent, scripted_client

from gemwire.events import Event, MessageDelta, Notice, TurnCompleted
from gemwire.runners.acp import AcpClient, AcpOptions, memory_channel_pair
from gemwire.runners.acp.gemini_cli import GeminiCliQuirks
from gemwire.runners.acp.quirks import NoQuirks, quirks_for
from gemwire.runners.agents import AGENTS, agent_identity

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

    async with scripted_client(name=name, on_new_session=on_new_session) as (client, _):
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
