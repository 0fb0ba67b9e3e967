"""``acp`` mode against the in-process `ScriptedAgent`: a retried task resumes its last
session where the agent offers ``session/resume``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from gemwire.batch import Task
from gemwire.batch._acp import AcpExecutor
from gemwire.events import Event, Notice
from gemwire.runners.acp import AcpClient, AcpOptions, PermissionHandler, memory_channel_pair
from gemwire.testing import AgentScenario, MethodHandler, ScriptedAgent, ScriptedError
from gemwire.wire import acp

pytestmark = pytest.mark.anyio

RESUMABLE = acp.AgentCapabilities(session_capabilities=acp.SessionCapabilities(resume={}))


@asynccontextmanager
async def executor(
    capabilities: acp.AgentCapabilities, methods: Mapping[str, MethodHandler], failures: int
) -> AsyncIterator[tuple[AcpExecutor, list[ScriptedAgent]]]:
    """An executor whose agents are `ScriptedAgent`s; the first ``failures`` prompts are
    answered 429."""
    agents: list[ScriptedAgent] = []
    prompts = 0

    async def on_prompt(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
        nonlocal prompts
        prompts += 1
        if prompts <= failures:
            raise ScriptedError("Too many requests", code=429)
        await agent.say(sid, f"done in {sid}")
        return "end_turn"

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:

            def connect(options: AcpOptions, handler: PermissionHandler) -> AcpClient:
                client_end, agent_end = memory_channel_pair()
                scenario = AgentScenario(agent_capabilities=capabilities)
                agent = ScriptedAgent(agent_end, scenario, on_prompt=on_prompt, methods=methods)
                agents.append(agent)
                tg.start_soon(agent.run)
                return AcpClient(options, channel=client_end, permission_handler=handler)

            ex = AcpExecutor(
                AcpOptions(),
                agent=None,
                agents=1,
                sessions_per_agent=10,
                concurrency=1,
                connect=connect,
            )
            async with ex:
                yield ex, agents
            tg.cancel_scope.cancel()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The test's folder as the client names it to the agent (symlinks resolved)."""
    return tmp_path.resolve()


def sent(agent: ScriptedAgent, method: str) -> list[dict[str, Any]]:
    return [m["params"] for m in agent.received if m.get("method") == method]


async def resumed(agent: ScriptedAgent, params: dict[str, Any]) -> dict[str, Any]:
    return {}


async def test_a_retried_task_resumes_the_session_of_its_failed_attempt(root: Path) -> None:
    task = Task(id="t", prompt="go")
    events: list[Event] = []
    methods = {"session/resume": resumed}
    async with executor(RESUMABLE, methods, failures=1) as (ex, agents):
        first = await ex.run(task, str(root), events.append)
        second = await ex.run(task, str(root), events.append)
        other = await ex.run(Task(id="u", prompt="go"), str(root), events.append)
    assert (first.ok, first.error.kind, first.session_id) == (False, "rate_limited", "s0")  # type: ignore[union-attr]
    assert (second.ok, second.answer, second.session_id) == (True, "done in s0", "s0")
    assert (other.ok, other.session_id) == (True, "s1")  # a new task: a new session
    [agent] = agents
    assert sent(agent, "session/resume") == [
        {"sessionId": "s0", "cwd": str(root), "mcpServers": []}
    ]
    assert [p["sessionId"] for p in sent(agent, "session/prompt")] == ["s0", "s0", "s1"]


async def test_without_resume_a_retried_task_gets_a_new_session(root: Path) -> None:
    task = Task(id="t", prompt="go")
    async with executor(acp.AgentCapabilities(load_session=True), {}, failures=1) as (ex, agents):
        await ex.run(task, str(root), lambda event: None)
        second = await ex.run(task, str(root), lambda event: None)
    assert (second.ok, second.session_id) == (True, "s1")
    assert sent(agents[0], "session/resume") == sent(agents[0], "session/load") == []


async def test_a_session_the_agent_cannot_resume_is_a_notice_and_a_new_session(
    root: Path,
) -> None:
    async def refuse(agent: ScriptedAgent, params: dict[str, Any]) -> dict[str, Any]:
        raise ScriptedError("Resource not found", code=-32002)

    task = Task(id="t", prompt="go")
    events: list[Event] = []
    async with executor(RESUMABLE, {"session/resume": refuse}, failures=1) as (ex, _):
        await ex.run(task, str(root), lambda event: None)
        second = await ex.run(task, str(root), events.append)
    assert (second.ok, second.session_id) == (True, "s1")
    notices = [e for e in events if isinstance(e, Notice)]
    assert [(n.session_id, n.severity, n.message) for n in notices] == [
        (
            None,
            "warning",
            "could not resume session s0 (Resource not found); starting a new one",
        )
    ]
    assert events[1].type == "session_started"


async def test_each_task_closes_its_session_where_offered_and_a_retry_resumes_it(
    root: Path,
) -> None:
    sessions = acp.SessionCapabilities(resume={}, close={})
    capabilities = acp.AgentCapabilities(session_capabilities=sessions)
    methods = {"session/resume": resumed, "session/close": resumed}
    task = Task(id="t", prompt="go")
    async with executor(capabilities, methods, failures=1) as (ex, agents):
        await ex.run(task, str(root), lambda event: None)
        second = await ex.run(task, str(root), lambda event: None)
        await ex.run(Task(id="u", prompt="go"), str(root), lambda event: None)
    assert (second.ok, second.session_id) == (True, "s0")
    methods_sent = [m.get("method") for m in agents[0].received if "method" in m]
    assert methods_sent == [
        "initialize",
        "session/new",
        "session/prompt",
        "session/close",
        "session/resume",
        "session/prompt",
        "session/close",
        "session/new",
        "session/prompt",
        "session/close",
    ]
    assert sent(agents[0], "session/close") == [{"sessionId": s} for s in ("s0", "s0", "s1")]


async def test_an_agent_without_close_keeps_its_sessions(root: Path) -> None:
    async with executor(acp.AgentCapabilities(), {}, failures=0) as (ex, agents):
        await ex.run(Task(id="t", prompt="go"), str(root), lambda event: None)
    assert sent(agents[0], "session/close") == []


async def test_a_close_the_agent_refuses_is_a_notice_and_the_task_still_succeeds(
    root: Path,
) -> None:
    async def refuse(agent: ScriptedAgent, params: dict[str, Any]) -> dict[str, Any]:
        raise ScriptedError("Internal error", code=-32603)

    events: list[Event] = []
    capabilities = acp.AgentCapabilities(session_capabilities=acp.SessionCapabilities(close={}))
    async with executor(capabilities, {"session/close": refuse}, failures=0) as (ex, _):
        outcome = await ex.run(Task(id="t", prompt="go"), str(root), events.append)
    assert outcome.ok
    assert [(e.session_id, e.message) for e in events if isinstance(e, Notice)] == [
        ("s0", "could not close session s0: Internal error")
    ]
