"""Sessions sharing agent processes (``--sessions-per-agent``): up to the cap on one
process, no cross-talk between the sessions on it, and a process that exits ends only its
own sessions, each continued by the next prompt on a process with room (``session/load``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from kit.server import Served, scripted_server

from gemwire.testing import ScriptedAgent

pytestmark = pytest.mark.anyio


async def answer_own(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
    [block] = params["prompt"]
    await agent.say(sid, f"re: {block['text']}")
    return "end_turn"


async def new_session(server: Served) -> str:
    response = await server.request("POST", "/v1/sessions", json={"agent": "scripted"})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _kind(envelope: dict[str, Any]) -> str:
    return (
        envelope["event"]["type"] if "event" in envelope else f"state:{envelope['state']['status']}"
    )


async def logged(server: Served, sid: str, kind: str, count: int = 1) -> list[dict[str, Any]]:
    """The session's log once it holds ``count`` envelopes of ``kind`` (polled: the log is
    the truth)."""
    while True:
        response = await server.request(
            "GET", f"/v1/sessions/{sid}/events", headers={"Accept": "application/json"}
        )
        envelopes: list[dict[str, Any]] = response.json()["events"]
        if [_kind(e) for e in envelopes].count(kind) >= count:
            return envelopes
        await anyio.sleep(0.01)


def answers(envelopes: list[dict[str, Any]]) -> list[str]:
    return [e["event"]["answer"] for e in envelopes if _kind(e) == "turn_completed"]


async def test_sessions_share_a_process_up_to_the_cap(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    dirs = str((tmp_path / "root").resolve()), str(tmp_path / "state")
    async with scripted_server(*dirs, on_prompt=answer_own, sessions_per_agent=2) as (
        server,
        launcher,
    ):
        sids = [await new_session(server) for _ in range(3)]
        assert [agent.sessions for agent in launcher.started] == [2, 1]
        shared = launcher.started[0]
        for sid, text in zip(sids, ("one", "two", "three"), strict=True):
            response = await server.request(
                "POST", f"/v1/sessions/{sid}/prompt", json={"text": text}
            )
            assert response.status_code == 202, response.text
        for sid, text in zip(sids, ("one", "two", "three"), strict=True):
            assert answers(await logged(server, sid, "turn_completed")) == [f"re: {text}"]

        # The shared process exits: its two sessions stop, the third runs on.
        await shared.channel.close(1)
        for sid in sids[:2]:
            stopped = await logged(server, sid, "state:stopped")
            assert stopped[-1]["state"]["detail"] == "the agent exited"
        third = await server.request("GET", f"/v1/sessions/{sids[2]}")
        assert third.json()["status"] == "idle"

        # A prompt continues a stopped session on a process with room: the third's.
        await server.request("POST", f"/v1/sessions/{sids[0]}/prompt", json={"text": "four"})
        assert answers(await logged(server, sids[0], "turn_completed", 2)) == [
            "re: one",
            "re: four",
        ]
        assert len(launcher.started) == 2
        methods = [m.get("method") for m in launcher.started[1].received]
        assert methods.count("session/load") == 1


async def test_one_session_a_process_with_sessions_per_agent_1(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    dirs = str((tmp_path / "root").resolve()), str(tmp_path / "state")
    async with scripted_server(*dirs, on_prompt=answer_own, sessions_per_agent=1) as (
        server,
        launcher,
    ):
        for _ in range(2):
            await new_session(server)
        assert [agent.sessions for agent in launcher.started] == [1, 1]


async def test_sessions_share_a_process_by_default(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    dirs = str((tmp_path / "root").resolve()), str(tmp_path / "state")
    async with scripted_server(*dirs, on_prompt=answer_own) as (server, launcher):
        for _ in range(2):
            await new_session(server)
        assert [agent.sessions for agent in launcher.started] == [2]
