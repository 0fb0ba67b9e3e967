"""`ScriptedAgent` as a client sees it: the test is the client, on a memory channel, and
holds the agent to the exact JSON-RPC frames of each step of its scenario."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from gemwire.events import MessageDelta, PermissionResolved
from gemwire.runners.acp import AcpOptions, MemoryChannel, memory_channel_pair
from gemwire.testing import (
    AgentScenario,
    AgentTurn,
    AwaitCancel,
    PromptError,
    ReadTextFile,
    RequestPermission,
    RunCommand,
    Say,
    ScriptedAgent,
    Sleep,
    Step,
    Think,
    Update,
    WriteTextFile,
    scripted_client,
)
from gemwire.wire import acp

pytestmark = pytest.mark.anyio

CWD = "/work"
INITIALIZE = {"protocolVersion": 1, "clientCapabilities": {"fs": {}, "terminal": True}}
ALLOW = acp.PermissionOption(option_id="yes", name="Allow", kind="allow_once")
REJECT = acp.PermissionOption(option_id="no", name="Reject", kind="reject_once")
ASKS = {"id": "default", "name": "Ask", "description": "Asks where the scenario asks, as scripted."}


class Client:
    """The client end of the channel, raw: the test sends and reads whole frames."""

    def __init__(self, end: MemoryChannel) -> None:
        self.end = end

    async def send(self, **message: Any) -> None:
        await self.end.send(json.dumps({"jsonrpc": "2.0", **message}).encode())

    async def frame(self) -> Any:
        return json.loads(await self.end.receive())

    async def expect(self, **message: Any) -> None:
        assert await self.frame() == {"jsonrpc": "2.0", **message}

    async def prompt(self, request_id: int = 2, session_id: str = "s0") -> None:
        prompt = [{"type": "text", "text": "go"}]
        params = {"sessionId": session_id, "prompt": prompt}
        await self.send(id=request_id, method="session/prompt", params=params)

    async def update(self, update: dict[str, Any], session_id: str = "s0") -> None:
        params = {"sessionId": session_id, "update": update}
        await self.expect(method="session/update", params=params)


@asynccontextmanager
async def session_of(scenario: AgentScenario) -> AsyncIterator[tuple[Client, ScriptedAgent]]:
    """An agent playing ``scenario``, initialized, with session ``s0`` open in ``CWD``."""
    client_end, agent_end = memory_channel_pair()
    agent = ScriptedAgent(agent_end, scenario)
    client = Client(client_end)
    with anyio.fail_after(10):
        async with client_end, agent_end, anyio.create_task_group() as tg:
            tg.start_soon(agent.run)
            await client.send(id=0, method="initialize", params=INITIALIZE)
            await client.frame()
            await client.send(id=1, method="session/new", params={"cwd": CWD, "mcpServers": []})
            modes = {"currentModeId": "default", "availableModes": [ASKS]}
            await client.expect(id=1, result={"sessionId": "s0", "modes": modes})
            yield client, agent
            tg.cancel_scope.cancel()


def text(kind: str, value: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": value}}


async def test_initialize_says_what_the_scenario_says() -> None:
    scenario = AgentScenario(
        agent_info=acp.Implementation(name="demo", version="2.0"),
        agent_capabilities=acp.AgentCapabilities(load_session=True),
    )
    client_end, agent_end = memory_channel_pair()
    async with client_end, agent_end, anyio.create_task_group() as tg:
        tg.start_soon(ScriptedAgent(agent_end, scenario).run)
        client = Client(client_end)
        await client.send(id=0, method="initialize", params=INITIALIZE)
        await client.expect(
            id=0,
            result={
                "protocolVersion": 1,
                "agentCapabilities": {"loadSession": True},
                "agentInfo": {"name": "demo", "version": "2.0"},
            },
        )
        tg.cancel_scope.cancel()


async def test_each_step_is_its_exact_acp_message_and_the_turn_ends_as_scripted() -> None:
    plan = {
        "sessionUpdate": "plan",
        "entries": [{"content": "a", "priority": "high", "status": "pending"}],
    }
    steps: list[Step] = [
        Think(text="Planning."),
        Update(update=plan),
        RequestPermission(
            tool_call=acp.ToolCallUpdate(tool_call_id="w1", title="Write a.txt"),
            options=[ALLOW],
            then={"yes": [WriteTextFile(path="a.txt", content="hi")]},
        ),
        ReadTextFile(path="/elsewhere/b.txt", line=2, limit=1),
        RunCommand(command="echo", args=["hi"], cwd="sub"),
        Sleep(seconds=0.01),
        Say(text="Done."),
    ]
    usage = acp.Usage(total_tokens=3, input_tokens=2, output_tokens=1)
    scenario = AgentScenario(turns=[AgentTurn(steps=steps, stop_reason="max_tokens", usage=usage)])
    async with session_of(scenario) as (client, agent):
        await client.prompt()
        await client.update(text("agent_thought_chunk", "Planning."))
        await client.update(plan)
        asked = {
            "sessionId": "s0",
            "toolCall": {"toolCallId": "w1", "title": "Write a.txt"},
            "options": [{"optionId": "yes", "name": "Allow", "kind": "allow_once"}],
        }
        await client.expect(id=0, method="session/request_permission", params=asked)
        await client.send(id=0, result={"outcome": {"outcome": "selected", "optionId": "yes"}})
        written = {"sessionId": "s0", "path": "/work/a.txt", "content": "hi"}
        await client.expect(id=1, method="fs/write_text_file", params=written)
        await client.send(id=1, result={})
        read = {"sessionId": "s0", "path": "/elsewhere/b.txt", "line": 2, "limit": 1}
        await client.expect(id=2, method="fs/read_text_file", params=read)
        await client.send(id=2, result={"content": "b"})
        created = {"sessionId": "s0", "command": "echo", "args": ["hi"], "cwd": "/work/sub"}
        await client.expect(id=3, method="terminal/create", params=created)
        await client.send(id=3, result={"terminalId": "t1"})
        terminal = {"sessionId": "s0", "terminalId": "t1"}
        await client.expect(id=4, method="terminal/wait_for_exit", params=terminal)
        await client.send(id=4, result={"exitCode": 0})
        await client.expect(id=5, method="terminal/output", params=terminal)
        await client.send(id=5, result={"output": "hi\n", "truncated": False})
        slept = anyio.current_time()
        await client.expect(id=6, method="terminal/release", params=terminal)
        await client.send(id=6, result={})
        await client.update(text("agent_message_chunk", "Done."))
        assert anyio.current_time() - slept >= 0.01
        result = {
            "stopReason": "max_tokens",
            "usage": {"totalTokens": 3, "inputTokens": 2, "outputTokens": 1},
        }
        await client.expect(id=2, result=result)
    assert agent.problems == []


@pytest.mark.parametrize(
    ("outcome", "then"),
    [
        ({"outcome": "selected", "optionId": "yes"}, "allowed"),
        ({"outcome": "selected", "optionId": "no"}, "rejected"),
        ({"outcome": "cancelled"}, "cancelled"),
    ],
)
async def test_the_steps_after_a_permission_are_those_of_the_answer(
    outcome: dict[str, str], then: str
) -> None:
    ask = RequestPermission(
        tool_call=acp.ToolCallUpdate(tool_call_id="w1"),
        options=[ALLOW, REJECT],
        then={
            "yes": [Say(text="allowed")],
            "no": [Say(text="rejected")],
            "cancelled": [Say(text="cancelled")],
        },
    )
    scenario = AgentScenario(turns=[AgentTurn(steps=[ask, Say(text="after")])])
    async with session_of(scenario) as (client, _):
        await client.prompt()
        assert (await client.frame())["method"] == "session/request_permission"
        await client.send(id=0, result={"outcome": outcome})
        await client.update(text("agent_message_chunk", then))
        await client.update(text("agent_message_chunk", "after"))
        await client.expect(id=2, result={"stopReason": "end_turn"})


async def test_await_cancel_waits_for_session_cancel_and_the_turn_ends_cancelled() -> None:
    steps: list[Step] = [Say(text="Working"), AwaitCancel(), Say(text="Stopped.")]
    async with session_of(AgentScenario(turns=[AgentTurn(steps=steps)])) as (client, agent):
        await client.prompt()
        await client.update(text("agent_message_chunk", "Working"))
        await client.send(method="session/cancel", params={"sessionId": "s0"})
        await client.update(text("agent_message_chunk", "Stopped."))
        await client.expect(id=2, result={"stopReason": "cancelled"})
        assert agent.cancelled.is_set()


async def test_an_error_step_answers_the_prompt_and_a_prompt_past_the_turns_is_a_problem() -> None:
    error = PromptError(code=-32000, message="Authentication required", data={"retry": False})
    turns = [AgentTurn(steps=[Say(text="no"), error, Say(text="never sent")])]
    async with session_of(AgentScenario(turns=turns)) as (client, agent):
        await client.prompt()
        await client.update(text("agent_message_chunk", "no"))
        refused = {"code": -32000, "message": "Authentication required", "data": {"retry": False}}
        await client.expect(id=2, error=refused)
        await client.prompt(request_id=3)
        problem = "prompt 2 (session s0): no turn left"
        await client.expect(id=3, error={"code": -32603, "message": f"scripted agent: {problem}"})
    assert agent.problems == [problem]


async def test_a_scenario_without_turns_ends_every_prompt_at_once() -> None:
    async with session_of(AgentScenario()) as (client, agent):
        for request_id in (2, 3):
            await client.prompt(request_id)
            await client.expect(id=request_id, result={"stopReason": "end_turn"})
    assert agent.problems == []


async def test_what_no_client_should_send_is_answered_and_noted() -> None:
    async with session_of(AgentScenario()) as (client, agent):
        await client.end.send(b"this is not json")
        await client.expect(id=None, error={"code": -32700, "message": "Parse error: not JSON"})
        await client.send(id=7, method="session/prompt", params={"prompt": []})
        answer = await client.frame()
        assert (answer["id"], answer["error"]["code"]) == (7, -32602)
        await client.send(id=8, method="no/such")
        await client.expect(id=8, error={"code": -32601, "message": "Method not found: no/such"})
        await client.send(id=9, method="session/new", params=[CWD])
        answer = await client.frame()
        assert (answer["id"], answer["error"]["code"]) == (None, -32600)
        await client.send(id=99, result={})
    assert agent.problems == [
        "Parse error: not JSON",
        "Invalid request: {'jsonrpc': '2.0', 'id': 9, 'method': 'session/new', 'params': ['/work']}",
        "an answer to no request of ours: {'jsonrpc': '2.0', 'id': 99, 'result': {}}",
    ]


async def test_gemwires_client_plays_a_scenario_to_its_events(tmp_path: Path) -> None:
    ask = RequestPermission(
        tool_call=acp.ToolCallUpdate(tool_call_id="w1", title="Write notes.txt", kind="edit"),
        options=[ALLOW, REJECT],
        then={"yes": [WriteTextFile(path="notes.txt", content="hi\n"), Say(text="Written.")]},
    )
    scenario = AgentScenario(turns=[AgentTurn(steps=[ask])])
    options = AcpOptions(cwd=str(tmp_path), permissions="edits")
    async with scripted_client(options, scenario=scenario) as (client, agent):
        session = await client.new_session()
        async with session.prompt("write it") as turn:
            events = [event async for event in turn]
    assert [e.option_id for e in events if isinstance(e, PermissionResolved)] == ["yes"]
    assert [e.text for e in events if isinstance(e, MessageDelta)] == ["Written."]
    assert (tmp_path / "notes.txt").read_text() == "hi\n"
    assert agent.problems == []
