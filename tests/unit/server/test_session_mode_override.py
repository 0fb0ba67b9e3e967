"""`gemwire serve` overrides the refusal of an agent gemwire does not know the modes of,
as the CLI's ``--mode`` and ``--permissions all`` do: ``mode`` in ``POST /v1/sessions``
reaches the session's client before its session opens (`AcpOptions.mode`), and lives in
the session's record, so a restarted server continues it in that mode; a session whose
permissions are ``all`` is answered by the preset, which needs no asking mode."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from kit.server import LoadingAgent, ScriptedLauncher, Served, make_config, served

from gemwire.runners.acp import AgentChannel, memory_channel_pair
from gemwire.runners.acp.options import AcpOptions
from gemwire.server import create_app
from gemwire.testing import AgentScenario, ScriptedAgent
from gemwire.wire import acp

pytestmark = pytest.mark.anyio


class UnknownLauncher(ScriptedLauncher):
    """The agent ``scripted``, saying it is ``my-agent`` (modes: default, yolo)."""

    def channel(self, options: AcpOptions) -> AgentChannel:
        client_end, agent_end = memory_channel_pair()
        info = acp.Implementation(name="my-agent", version="1.0")
        agent = LoadingAgent(agent_end, AgentScenario(agent_info=info))
        agent.on_prompt = _answer
        self.started.append(agent)
        self.tg.start_soon(agent.run)
        return client_end


async def _answer(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
    await agent.say(sid, "done")
    return "end_turn"


@asynccontextmanager
async def unknown_server(root: Path) -> AsyncIterator[tuple[Served, UnknownLauncher]]:
    config = make_config(str(root), str(root / "state"))
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            launcher = UnknownLauncher(tg)
            async with served(create_app(config, launcher=launcher)) as server:
                yield server, launcher
            tg.cancel_scope.cancel()


def _calls(agent: ScriptedAgent) -> list[tuple[str, Any]]:
    return [
        (m["method"], (m.get("params") or {}).get("modeId"))
        for m in agent.received
        if "method" in m and m["method"] != "session/cancel"
    ]


async def test_mode_runs_an_unknown_agent_in_that_mode_and_survives_a_restart(
    tmp_path: Path,
) -> None:
    body = {"agent": "scripted", "cwd": str(tmp_path), "mode": "yolo"}
    async with unknown_server(tmp_path) as (server, launcher):
        created = await server.request("POST", "/v1/sessions", json=body)
        assert created.status_code == 201, created.text
        assert created.json()["current_mode"] == "yolo"
        sid = created.json()["id"]
        [agent] = launcher.started
        assert _calls(agent) == [
            ("initialize", None),
            ("session/new", None),
            ("session/set_mode", "yolo"),
        ]
    record = json.loads((tmp_path / "state" / "sessions" / sid / "session.json").read_bytes())
    assert record["mode"] == "yolo"

    async with unknown_server(tmp_path) as (server, launcher):
        prompted = await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "hi"})
        assert prompted.status_code == 202, prompted.text
        [agent] = launcher.started
        assert _calls(agent)[:3] == [
            ("initialize", None),
            ("session/load", None),
            ("session/set_mode", "yolo"),
        ]
        assert (await server.request("GET", f"/v1/sessions/{sid}")).json()["current_mode"] == (
            "yolo"
        )


async def test_a_mode_the_agent_does_not_offer_is_a_400_that_leaves_nothing(
    tmp_path: Path,
) -> None:
    body = {"agent": "scripted", "cwd": str(tmp_path), "mode": "warp"}
    async with unknown_server(tmp_path) as (server, launcher):
        refused = await server.request("POST", "/v1/sessions", json=body)
        assert (refused.status_code, refused.json()) == (
            400,
            {
                "error": {
                    "kind": "bad_request",
                    "message": "the agent refused the session's mode: no mode 'warp'",
                }
            },
        )
        assert (await server.request("GET", "/v1/sessions")).json() == {"sessions": []}
        [agent] = launcher.started
        assert _calls(agent) == [
            ("initialize", None),
            ("session/new", None),
            ("session/set_mode", "warp"),
        ]


async def test_permissions_all_runs_an_unknown_agent_as_it_is(tmp_path: Path) -> None:
    body = {"agent": "scripted", "cwd": str(tmp_path), "permissions": "all"}
    async with unknown_server(tmp_path) as (server, launcher):
        created = await server.request("POST", "/v1/sessions", json=body)
        assert created.status_code == 201, created.text
        assert created.json()["current_mode"] == "default"
        [agent] = launcher.started
        assert _calls(agent) == [("initialize", None), ("session/new", None)]


async def test_a_mode_set_later_is_the_one_a_restart_continues_in(tmp_path: Path) -> None:
    body = {"agent": "scripted", "cwd": str(tmp_path), "mode": "yolo"}
    async with unknown_server(tmp_path) as (server, _):
        sid = (await server.request("POST", "/v1/sessions", json=body)).json()["id"]
        changed = await server.request(
            "POST", f"/v1/sessions/{sid}/mode", json={"mode_id": "default"}
        )
        assert changed.status_code == 200, changed.text
    record = json.loads((tmp_path / "state" / "sessions" / sid / "session.json").read_bytes())
    assert record["mode"] == "default"
