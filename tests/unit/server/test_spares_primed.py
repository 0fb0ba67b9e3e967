"""Primed spares (`SpareAgents`): a spare is sent a session's ``initialize`` and
``session/new`` ahead, and the session's client is answered from what it said. Scripted
agents in this process: nothing is started but tasks."""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import TaskGroup
from hypothesis import given, settings, strategies as st
from kit.server import Served, scripted_server

from gemwire.events import Event
from gemwire.runners.acp import (
    AcpClient,
    AcpOptions,
    AgentChannel,
    MemoryChannel,
    allow_all_commands,
    memory_channel_pair,
)
from gemwire.server.agents import AgentEntry
from gemwire.server.responses import NotFound
from gemwire.server.spare import Messages as _Messages, Unused as _Unused
from gemwire.server.spares import SpareAgents
from gemwire.testing import AgentScenario, ScriptedAgent, ScriptedError
from gemwire.wire import acp

pytestmark = pytest.mark.anyio


class Chatty(ScriptedAgent):
    """Says something about a session before its ``session/new`` answer and after it (as
    Gemini CLI sends its commands right after the answer)."""

    async def respond(self, message: dict[str, Any]) -> None:
        if message["method"] != "session/new":
            await super().respond(message)
            return
        sid = f"s{self.sessions}"
        self.sessions += 1
        await self.update(sid, "session_info_update", title=f"{sid} before")
        await self.send({"id": message["id"], "result": {"sessionId": sid}})
        await self.update(sid, "session_info_update", title=f"{sid} after")


Make = Callable[[MemoryChannel], ScriptedAgent]


class Agents:
    """A launcher of agents named ``scripted``, each made by ``make`` and run in ``tg``."""

    def __init__(self, tg: TaskGroup, make: Make, request_timeout: float = 10) -> None:
        self.tg = tg
        self.make = make
        self.request_timeout = request_timeout
        self.started: list[ScriptedAgent] = []

    def agents(self) -> list[AgentEntry]:
        return []

    def options(self, name: str, cwd: str) -> AcpOptions:
        if name != "scripted":
            raise NotFound(f"unknown agent {name!r}")
        return AcpOptions(cwd=cwd, request_timeout=self.request_timeout)

    def channel(self, options: AcpOptions) -> AgentChannel:
        client_end, agent_end = memory_channel_pair()
        agent = self.make(agent_end)
        self.started.append(agent)
        self.tg.start_soon(agent.run)
        return client_end


@asynccontextmanager
async def spares_of(
    root: Path, make: Make = Chatty, request_timeout: float = 10
) -> AsyncIterator[tuple[SpareAgents, Agents]]:
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            agents = Agents(tg, make, request_timeout)
            async with SpareAgents(agents, ["scripted"], str(root)) as spares:
                yield spares, agents
            # Every agent ends by itself once its client's end is closed.


async def primed(spares: SpareAgents) -> None:
    """Once a spare of ``scripted`` is primed and waiting (nothing else runs meanwhile)."""
    while "scripted" not in spares._ready:
        await anyio.wait_all_tasks_blocked()


def methods(agent: ScriptedAgent) -> list[str]:
    return [m.get("method", "(answer)") for m in agent.received]


def seen(events: list[Event]) -> list[tuple[str, Any]]:
    """Each event's type, and what tells it apart: a session's folder, an update's title."""
    found: list[tuple[str, Any]] = []
    for event in events:
        detail = getattr(event, "cwd", None) or getattr(event, "data", None) or None
        if isinstance(detail, dict):
            detail = detail.get("title")
        found.append((event.type, detail))
    return found


async def turn_events(client: AcpClient, cwd: str) -> tuple[str, list[Event]]:
    """A new session in ``cwd`` and the events of its first turn (what came before the
    turn included)."""
    session = await client.new_session(cwd=cwd)
    events: list[Event] = []
    async with session.prompt("hello") as turn:
        events = [event async for event in turn]
    assert turn.result.ok
    return session.session_id, events


async def test_a_session_is_answered_from_what_the_spare_said_ahead(tmp_path: Path) -> None:
    async with spares_of(tmp_path) as (spares, agents):
        await primed(spares)
        [spare] = agents.started
        assert methods(spare) == ["initialize", "session/new"]  # before any session asked
        assert spare.received[1]["params"] == {"cwd": str(tmp_path), "mcpServers": []}
        options = spares.options("scripted", str(tmp_path))
        async with AcpClient(options, channel=spares.session_channel(options)) as client:
            assert client.agent == "acp:scripted"
            sid, events = await turn_events(client, str(tmp_path))
        assert sid == "s0"
        assert methods(spare) == ["initialize", "session/new", "session/prompt"]
        assert seen(events) == [
            ("session_started", str(tmp_path)),
            ("session_updated", "s0 before"),
            ("session_updated", "s0 after"),
            ("user_message", None),
            ("turn_completed", None),
        ]
        await primed(spares)  # the next one, started behind it
        assert [methods(a) for a in agents.started] == [
            ["initialize", "session/new", "session/prompt"],
            ["initialize", "session/new"],
        ]


def closing(channel: MemoryChannel) -> ScriptedAgent:
    async def close(agent: ScriptedAgent, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    sessions = acp.SessionCapabilities(close={})
    scenario = AgentScenario(
        agent_capabilities=acp.AgentCapabilities(session_capabilities=sessions)
    )
    return Chatty(channel, scenario, methods={"session/close": close})


@pytest.mark.parametrize(("make", "closed"), [(Chatty, []), (closing, ["session/close"])])
async def test_a_session_in_another_folder_is_opened_by_the_agent(
    tmp_path: Path, make: Make, closed: list[str]
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    async with spares_of(tmp_path, make) as (spares, agents):
        await primed(spares)
        options = spares.options("scripted", str(other))
        async with AcpClient(options, channel=spares.session_channel(options)) as client:
            sid, events = await turn_events(client, str(other))
        [spare, _] = agents.started
        assert sid == "s1"
        assert methods(spare) == ["initialize", "session/new", "session/new", *closed, "session/prompt"]  # fmt: skip
        assert spare.received[2]["params"]["cwd"] == str(other)
        if closed:
            assert spare.received[3]["params"] == {"sessionId": "s0"}
        # Nothing of the session opened ahead (its answer, its updates, its close); the
        # agent's last update may come after the prompt's user_message, as from any agent.
        assert [e for e in seen(events) if e[0] != "user_message"] == [
            ("session_started", str(other)),
            ("session_updated", "s1 before"),
            ("session_updated", "s1 after"),
            ("turn_completed", None),
        ]


async def test_a_client_with_another_initialize_gets_a_new_agent(tmp_path: Path) -> None:
    async with spares_of(tmp_path) as (spares, agents):
        await primed(spares)
        options = spares.options("scripted", str(tmp_path))
        # The ACP endpoint's client (its initialize its own: here, with terminals)...
        async with AcpClient(
            options, channel=spares.channel(options), terminal_policy=allow_all_commands
        ) as client:
            assert (await turn_events(client, str(tmp_path)))[0] == "s0"
        # ... and a session whose options differ from the spare's (reads served).
        reads = AcpOptions(cwd=str(tmp_path), serve_reads=True)
        async with AcpClient(reads, channel=spares.session_channel(reads)) as client:
            assert (await turn_events(client, str(tmp_path)))[0] == "s0"
        spare, *fresh = agents.started
        assert methods(spare) == ["initialize", "session/new"]  # still waiting, unused
        assert [methods(a) for a in fresh] == [["initialize", "session/new", "session/prompt"]] * 2
        assert [a.received[0]["params"]["clientCapabilities"]["terminal"] for a in fresh] == [
            True,
            False,
        ]
        assert fresh[1].received[0]["params"]["clientCapabilities"]["fs"]["readTextFile"]
        assert "scripted" in spares._ready


async def test_an_initialize_other_than_the_spares_goes_to_the_agent(tmp_path: Path) -> None:
    # Not a session's client, handed a spare all the same: its initialize is answered by
    # the agent, and the session opened ahead goes unused.
    async with spares_of(tmp_path) as (spares, agents):
        await primed(spares)
        options = spares.options("scripted", str(tmp_path))
        async with AcpClient(
            options, channel=spares.session_channel(options), terminal_policy=allow_all_commands
        ) as client:
            sid, events = await turn_events(client, str(tmp_path))
        spare = agents.started[0]
        assert methods(spare) == ["initialize", "session/new"] * 2 + ["session/prompt"]
        assert spare.received[2]["params"]["clientCapabilities"]["terminal"] is True
        assert sid == "s1"
        assert [e for e in seen(events) if e[0] != "user_message"] == [
            ("session_started", str(tmp_path)),
            ("session_updated", "s1 before"),
            ("session_updated", "s1 after"),
            ("turn_completed", None),
        ]


async def refuse_sessions(agent: ScriptedAgent, number: int) -> None:
    raise ScriptedError("Authentication required.", code=-32000)


class Silent(ScriptedAgent):
    async def respond(self, message: dict[str, Any]) -> None:
        await anyio.sleep_forever()


class Leaving(ScriptedAgent):
    async def respond(self, message: dict[str, Any]) -> None:
        await self.channel.close(0, reason="it had enough")


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (
            lambda channel: ScriptedAgent(channel, on_new_session=refuse_sessions),
            "it answered session/new with an error: Authentication required.",
        ),
        (Silent, "it did not answer initialize within 0.05 s"),
        (Leaving, "it ended before answering initialize: it had enough"),
    ],
)
async def test_a_spare_whose_priming_failed_is_not_handed_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, make: Make, why: str
) -> None:
    with caplog.at_level(logging.WARNING, logger="gemwire.server"):
        async with spares_of(tmp_path, make, request_timeout=0.05) as (spares, agents):
            while not caplog.messages:  # noqa: ASYNC110 - the log is what says it failed
                await anyio.sleep(0.01)
            assert "scripted" not in spares._ready
            channel = spares.session_channel(spares.options("scripted", str(tmp_path)))
            assert isinstance(channel, MemoryChannel)  # a new agent's
            async with channel:
                await channel.close(5)
    assert caplog.messages == [f"gemwire serve: no spare scripted agent: {why}"]
    assert len(agents.started) == 2  # the session's own; no spare started again


async def test_a_warm_servers_session_takes_the_primed_spare(tmp_path: Path) -> None:
    root, state = (tmp_path / "root").resolve(), tmp_path / "state"
    root.mkdir()
    async with scripted_server(str(root), str(state), warm=("scripted",)) as (server, agents):
        await primed(server.app.state.gemwire.launcher)
        [spare] = agents.started
        assert methods(spare) == ["initialize", "session/new"]
        created = await server.request("POST", "/v1/sessions", json={"agent": "scripted"})
        assert created.status_code == 201, created.text
        sid = created.json()["id"]
        prompted = await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "hi"})
        assert prompted.status_code == 202, prompted.text
        while (kinds := await logged_kinds(server, sid))[-1] != "state:idle":  # noqa: ASYNC110
            await anyio.sleep(0.01)  # the log is the truth: polled
        assert kinds == [
            "state:starting",
            "session_started",
            "state:idle",
            "state:running",
            "user_message",
            "turn_completed",
            "state:idle",
        ]
        assert methods(spare) == ["initialize", "session/new", "session/prompt"]
        view = (await server.request("GET", f"/v1/sessions/{sid}")).json()
        assert view["agent_session_id"] == spare.received[2]["params"]["sessionId"]


async def logged_kinds(server: Served, sid: str) -> list[str]:
    response = await server.request(
        "GET", f"/v1/sessions/{sid}/events", headers={"Accept": "application/json"}
    )
    return [
        e["event"]["type"] if "event" in e else f"state:{e['state']['status']}"
        for e in response.json()["events"]
    ]


# What a spare said, cut into messages and filtered over a pipe: any chunking, the same.

_NOTICE = {"jsonrpc": "2.0", "method": "session/update"}
_MESSAGES = st.sampled_from(
    [
        json.dumps({**_NOTICE, "params": {"sessionId": "s0", "update": {}}}),  # the unused one's
        json.dumps({**_NOTICE, "params": {"sessionId": "s1", "update": {}}}),
        json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s0"}}),  # an answer kept
        json.dumps({"jsonrpc": "2.0", "id": "gemwire-spare", "result": None}),  # one dropped
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "x", "params": {"sessionId": "s1"}}),
        "not json",
        "x" * 200,  # over the limit of a line held: passed in pieces
    ]
)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(_MESSAGES, max_size=8), cuts=st.lists(st.integers(0, 1000), max_size=6))
def test_what_a_spare_said_is_filtered_whole_however_a_pipe_cuts_it(
    lines: list[str], cuts: list[int]
) -> None:
    stream = "".join(line + "\n" for line in lines).encode()
    bounds = sorted({0, len(stream), *(c for c in cuts if c < len(stream))})
    unused = _Unused(_Messages("lines", 120), "s0", frozenset({b'"gemwire-spare"'}))
    kept = [m for a, b in itertools.pairwise(bounds) for m in unused.feed(stream[a:b])]
    kept += unused.end()
    dropped = ('"s0", "update"', '"gemwire-spare"')
    expected = [line + "\n" for line in lines if not any(d in line for d in dropped)]
    assert b"".join(kept).decode() == "".join(expected)


async def test_the_next_spare_starts_once_the_session_has_its_first_answer(
    tmp_path: Path,
) -> None:
    go_on = anyio.Event()

    async def answer(agent: ScriptedAgent, session_id: str, params: dict[str, Any]) -> str:
        await agent.say(session_id, "first")
        await go_on.wait()
        return "end_turn"

    async with spares_of(tmp_path, lambda channel: Chatty(channel, on_prompt=answer)) as (
        spares,
        agents,
    ):
        await primed(spares)
        options = spares.options("scripted", str(tmp_path))
        async with AcpClient(options, channel=spares.session_channel(options)) as client:
            session = await client.new_session(cwd=str(tmp_path))
            await anyio.wait_all_tasks_blocked()
            assert len(agents.started) == 1  # not while its first prompt is to come
            async with session.prompt("hello") as turn:
                async for event in turn:
                    if event.type == "message_delta":
                        break
                await primed(spares)  # its first answer came: the next one started
                assert len(agents.started) == 2
                go_on.set()


async def test_a_session_that_finds_no_spare_starts_the_next_one(tmp_path: Path) -> None:
    async with spares_of(tmp_path) as (spares, agents):
        await primed(spares)
        options = spares.options("scripted", str(tmp_path))
        async with AcpClient(options, channel=spares.session_channel(options)):
            await anyio.wait_all_tasks_blocked()
            assert len(agents.started) == 1  # its session, with no prompt yet, holds it back
            async with AcpClient(options, channel=spares.session_channel(options)) as second:
                await second.new_session()
                await primed(spares)
                # The second session's own agent, then the next spare.
                assert [methods(a) for a in agents.started[1:]] == [
                    ["initialize", "session/new"],
                    ["initialize", "session/new"],
                ]
