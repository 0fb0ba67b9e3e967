"""Sessions sharing agent processes (``--sessions-per-agent`` over 1) beside what else
happens to a process: a session refused while it opens leaves nothing behind on a process
that serves on, ``--warm`` hands its primed spare to the pool, and every session opened on
a process hears the agent's login (``auth_status``), not only the first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from kit.server import MODES, LoadingAgent, Served, scripted_server

from gemwire.runners.acp import AgentChannel, memory_channel_pair
from gemwire.runners.acp.options import AcpOptions
from gemwire.testing import ScriptedAgent

pytestmark = pytest.mark.anyio

_AUTH = {"authStatus": {"kind": "api_key", "label": "API key", "detail": "env"}}


async def answer_own(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
    [block] = params["prompt"]
    await agent.say(sid, f"re: {block['text']}")
    return "end_turn"


class Picky(LoadingAgent):
    """Offers ``session/close``; its second session has no mode that asks (``default``),
    and it says its login once, after ``initialize``."""

    async def respond(self, message: dict[str, Any]) -> None:
        method = message["method"]
        if method == "initialize":
            caps = {"loadSession": True, "sessionCapabilities": {"close": {}}}
            info = {"name": self.scenario.agent_info.name, "version": "1.0"}
            result = {"protocolVersion": 1, "agentInfo": info, "agentCapabilities": caps}
            await self.send({"id": message["id"], "result": result})
            await self.send({"method": "_auth/status_update", "params": _AUTH})
        elif method == "session/new" and self.sessions == 1:
            self.sessions += 1
            modes = {"currentModeId": "yolo", "availableModes": MODES[1:]}
            result = {"sessionId": "refused", "modes": modes}
            await self.send({"id": message["id"], "result": result})
        elif method == "session/close":
            await self.send({"id": message["id"], "result": {}})
        else:
            await super().respond(message)


def picky_agents(launcher: Any) -> None:
    def channel(options: AcpOptions) -> AgentChannel:
        client_end, agent_end = memory_channel_pair()
        agent = Picky(agent_end)
        agent.on_prompt = answer_own
        launcher.started.append(agent)
        launcher.tg.start_soon(agent.run)
        return client_end

    launcher.channel = channel


async def create(server: Served) -> str:
    response = await server.request("POST", "/v1/sessions", json={"agent": "scripted"})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


async def logged(server: Served, sid: str, kind: str) -> list[dict[str, Any]]:
    """The session's log once it holds an envelope of ``kind`` (polled: the log is the
    truth)."""
    while True:
        response = await server.request(
            "GET", f"/v1/sessions/{sid}/events", headers={"Accept": "application/json"}
        )
        envelopes: list[dict[str, Any]] = response.json()["events"]
        if any(e.get("event", {}).get("type") == kind for e in envelopes):
            return envelopes
        await anyio.sleep(0.01)


def _events(envelopes: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e["event"] for e in envelopes if e.get("event", {}).get("type") == kind]


async def test_a_session_refused_on_a_shared_process_is_closed_and_forgotten(
    tmp_path: Path,
) -> None:
    (tmp_path / "root").mkdir()
    dirs = str((tmp_path / "root").resolve()), str(tmp_path / "state")
    async with scripted_server(*dirs, sessions_per_agent=3) as (server, launcher):
        picky_agents(launcher)
        first = await create(server)
        refused = await server.request("POST", "/v1/sessions", json={"agent": "scripted"})
        assert (refused.status_code, refused.json()["error"]["kind"]) == (
            400,
            "permissions_unenforceable",
        )
        [agent] = launcher.started  # it serves on: the first session still uses it
        closes = [m["params"] for m in agent.received if m.get("method") == "session/close"]
        assert closes == [{"sessionId": "refused"}]
        [shared] = server.app.state.gemwire.sessions.acp.pool._agents
        assert shared.client is not None
        view = (await server.request("GET", f"/v1/sessions/{first}")).json()
        # The client keeps the first session only, and so does the pool.
        assert list(shared.client._router.sessions) == [view["agent_session_id"]]
        assert list(shared.handlers) == [view["agent_session_id"]]
        prompted = await server.request("POST", f"/v1/sessions/{first}/prompt", json={"text": "x"})
        assert prompted.status_code == 202, prompted.text
        [done] = _events(await logged(server, first, "turn_completed"), "turn_completed")
        assert done["answer"] == "re: x"


async def test_every_session_on_a_process_gets_its_auth_status(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    dirs = str((tmp_path / "root").resolve()), str(tmp_path / "state")
    async with scripted_server(*dirs, sessions_per_agent=3) as (server, launcher):
        picky_agents(launcher)
        first = await create(server)
        await server.request("POST", "/v1/sessions", json={"agent": "scripted"})  # refused
        third = await create(server)
        assert len(launcher.started) == 1
        for sid in (first, third):
            # Its events up to its session_started, the agent's login with them: logged
            # as the session opened.
            envelopes = await logged(server, sid, "session_started")
            [status] = _events(envelopes, "auth_status")
            assert (status["kind"], status["label"], status["detail"]) == (
                "api_key",
                "API key",
                "env",
            )
            assert status["session_id"] == _events(envelopes, "session_started")[0]["session_id"]


async def test_a_warm_spare_serves_as_a_shared_process(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    dirs = str((tmp_path / "root").resolve()), str(tmp_path / "state")
    async with scripted_server(
        *dirs, on_prompt=answer_own, sessions_per_agent=2, warm=("scripted",)
    ) as (server, launcher):
        spares = server.app.state.gemwire.launcher
        while "scripted" not in spares._ready:
            await anyio.wait_all_tasks_blocked()
        [spare] = launcher.started
        sids = [await create(server) for _ in range(3)]
        assert spare.sessions == 2  # the one primed ahead, then the second's own
        assert [agent.sessions for agent in launcher.started[1:2]] == [1]
        for sid, text in zip(sids, ("one", "two", "three"), strict=True):
            response = await server.request(
                "POST", f"/v1/sessions/{sid}/prompt", json={"text": text}
            )
            assert response.status_code == 202, response.text
        for sid, text in zip(sids, ("one", "two", "three"), strict=True):
            [done] = _events(await logged(server, sid, "turn_completed"), "turn_completed")
            assert done["answer"] == f"re: {text}"
        prompted = [
            m["params"]["sessionId"] for m in spare.received if m.get("method") == "session/prompt"
        ]
        views = [(await server.request("GET", f"/v1/sessions/{sid}")).json() for sid in sids]
        assert sorted(prompted) == sorted(v["agent_session_id"] for v in views[:2])
