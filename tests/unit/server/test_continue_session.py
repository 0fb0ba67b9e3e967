"""A stopped session is continued with ``session/resume`` where the agent offers it (no
history replayed), else with ``session/load`` (the history it replays is in the log
already, so the log gets none of it)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp_scripted import ScriptedAgent
from anyio.abc import TaskGroup
from kit.server import FakeStreamLauncher, ScriptedLauncher, Served, make_config, served

from gemwire.runners.acp import AcpOptions, AgentChannel, memory_channel_pair
from gemwire.server import create_app

pytestmark = pytest.mark.anyio


class ContinuingAgent(ScriptedAgent):
    """Loads a session (replaying one message of it), and resumes one if ``resumes``."""

    def __init__(self, *args: Any, resumes: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.capabilities = {"loadSession": True}
        if resumes:
            self.capabilities["sessionCapabilities"] = {"resume": {}}

    async def _answer(self, message: dict[str, Any]) -> None:
        method, params = message["method"], message.get("params") or {}
        if method == "session/load":
            await self.say(params["sessionId"], "earlier")
        elif method != "session/resume":
            await super()._answer(message)
            return
        await self.send({"id": message["id"], "result": {}})


class ContinuingLauncher(ScriptedLauncher):
    def __init__(self, tg: TaskGroup, *, resumes: bool) -> None:
        super().__init__(tg)
        self.resumes = resumes

    def channel(self, options: AcpOptions) -> AgentChannel:
        client_end, agent_end = memory_channel_pair()
        agent = ContinuingAgent(agent_end, name="scripted", resumes=self.resumes)
        self.started.append(agent)
        self.tg.start_soon(agent.run)
        return client_end


@asynccontextmanager
async def server_of(
    tmp_path: Path, *, resumes: bool
) -> AsyncIterator[tuple[Served, ContinuingLauncher]]:
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            launcher = ContinuingLauncher(tg, resumes=resumes)
            config = make_config(str(tmp_path), str(tmp_path / "state"), idle_timeout=0.05)
            app = create_app(config, launcher=launcher, stream_launcher=FakeStreamLauncher())
            async with served(app) as server:
                yield server, launcher
            tg.cancel_scope.cancel()


async def log_once(server: Served, sid: str, kind: str) -> list[dict[str, Any]]:
    """The session's logged envelopes once one is ``kind`` (polled: the log is the truth)."""
    while True:
        response = await server.request(
            "GET", f"/v1/sessions/{sid}/events", headers={"Accept": "application/json"}
        )
        envelopes: list[dict[str, Any]] = response.json()["events"]
        if any(e.get("event", {}).get("type") == kind for e in envelopes):
            return envelopes
        if any(e.get("state", {}).get("status") == kind for e in envelopes):
            return envelopes
        await anyio.sleep(0.01)


async def continued(tmp_path: Path, *, resumes: bool) -> tuple[list[str], list[dict[str, Any]]]:
    """The methods the second agent got, and the events of the continued session."""
    async with server_of(tmp_path, resumes=resumes) as (server, launcher):
        created = await server.request("POST", "/v1/sessions", json={"agent": "scripted"})
        sid = created.json()["id"]
        before = await log_once(server, sid, "stopped")  # the idle timeout
        await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "back"})
        after = (await log_once(server, sid, "turn_completed"))[len(before) :]
        methods = [m["method"] for m in launcher.started[1].received if "method" in m]
    return methods, [e["event"] for e in after if "event" in e]


async def test_an_agent_offering_resume_is_resumed_without_replay(tmp_path: Path) -> None:
    methods, events = await continued(tmp_path, resumes=True)
    assert methods == ["initialize", "session/resume", "session/prompt"]
    assert [e["type"] for e in events] == [
        "session_started",
        "user_message",
        "turn_completed",
    ]
    assert not any(e.get("replay") for e in events)


async def test_an_agent_without_resume_is_loaded_and_its_replay_kept_out_of_the_log(
    tmp_path: Path,
) -> None:
    methods, events = await continued(tmp_path, resumes=False)
    assert methods == ["initialize", "session/load", "session/prompt"]
    assert [e["type"] for e in events] == [
        "session_started",
        "user_message",
        "turn_completed",
    ]
