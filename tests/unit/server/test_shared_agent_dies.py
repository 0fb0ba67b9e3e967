"""A shared agent process that dies after sessions opened on it (``--sessions-per-agent``
2): only its own sessions end, each with a typed end its clients read (the running turn's
``turn_completed`` with its error kind, then ``stopped``, the agent's exit named), the
sessions of the other process run on, and each ended session continues on a new process
through ``session/load``. Scripted agents in memory: the "kill" is the agent's end of the
channel closing, as a dead process's pipes do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from kit.remote import StreamingASGITransport
from kit.server import BASE, TOKEN, Served, SseStream, scripted_server

from gemwire.events import MessageDelta
from gemwire.remote import connect
from gemwire.testing import ScriptedAgent

pytestmark = pytest.mark.anyio


async def answer_or_hang(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
    """``hang`` says it works and never ends; anything else is answered."""
    [block] = params["prompt"]
    if block["text"] == "hang":
        await agent.say(sid, "working")
        await anyio.sleep_forever()
    await agent.say(sid, f"re: {block['text']}")
    return "end_turn"


async def new_session(server: Served) -> str:
    response = await server.request("POST", "/v1/sessions", json={"agent": "scripted"})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _kind(envelope: dict[str, Any]) -> str:
    if "event" in envelope:
        return str(envelope["event"]["type"])
    return f"state:{envelope['state']['status']}"


async def until(stream: SseStream, kind: str) -> list[dict[str, Any]]:
    """The stream's envelopes once one of ``kind`` came."""
    while kind not in [_kind(e) for e in stream.envelopes()]:
        await stream.wait_for(len(stream.envelopes()) + 1)
    return stream.envelopes()


async def answers(server: Served, sid: str, count: int) -> list[str]:
    """The answers of the session's turns once it logged ``count`` of them (polled: the
    log is the truth)."""
    while True:
        response = await server.request(
            "GET", f"/v1/sessions/{sid}/events", headers={"Accept": "application/json"}
        )
        done = [e["event"] for e in response.json()["events"] if _kind(e) == "turn_completed"]
        if len(done) >= count:
            return [event["answer"] for event in done]
        await anyio.sleep(0.01)


async def prompt(server: Served, sid: str, text: str) -> None:
    response = await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": text})
    assert response.status_code == 202, response.text


def loaded(agent: ScriptedAgent) -> list[str]:
    return [m["params"]["sessionId"] for m in agent.received if m.get("method") == "session/load"]


async def test_a_dead_shared_process_ends_only_its_sessions_which_load_on_a_new_one(
    tmp_path: Path,
) -> None:
    (tmp_path / "root").mkdir()
    dirs = str((tmp_path / "root").resolve()), str(tmp_path / "state")
    async with (
        scripted_server(*dirs, on_prompt=answer_or_hang, sessions_per_agent=2) as (
            server,
            launcher,
        ),
        anyio.create_task_group() as tg,
    ):
        transport = StreamingASGITransport(server.app, tg)
        running, idle, *others = [await new_session(server) for _ in range(4)]
        assert [agent.sessions for agent in launcher.started] == [2, 2]
        dying, living = launcher.started
        views = {
            sid: (await server.request("GET", f"/v1/sessions/{sid}")).json()
            for sid in (running, idle)
        }
        async with (
            connect(BASE, token=TOKEN, transport=transport) as remote,
            server.sse(f"/v1/sessions/{idle}/events") as idle_stream,
        ):
            session = await remote.session(running)
            async with session.prompt("hang") as turn:
                async for event in turn:
                    if isinstance(event, MessageDelta):
                        await dying.channel.close(1)  # the process dies mid-turn
            # The running turn's client gets its end, typed: not a hang.
            assert turn.result.error is not None
            assert (turn.result.ok, turn.result.stop_reason, turn.result.error.kind) == (
                False,
                "error",
                "crashed",
            )
            # The idle session's client sees it stop, the agent's exit named.
            stopped = await until(idle_stream, "state:stopped")
            assert stopped[-1]["state"] == {"status": "stopped", "detail": "the agent exited"}
        ran = await server.request(
            "GET", f"/v1/sessions/{running}/events", headers={"Accept": "application/json"}
        )
        assert [_kind(e) for e in ran.json()["events"]][-2:] == ["turn_completed", "state:stopped"]
        assert ran.json()["events"][-2]["event"]["error"]["kind"] == "crashed"  # every client's
        assert ran.json()["events"][-1]["state"] == {
            "status": "stopped",
            "detail": "the agent exited",
        }
        # Only the dead process's sessions ended: the other process's serve on.
        for sid in others:
            assert (await server.request("GET", f"/v1/sessions/{sid}")).json()["status"] == "idle"
            await prompt(server, sid, sid)
            assert await answers(server, sid, 1) == [f"re: {sid}"]
        # Each ended session continues on a new process (the other is full), loaded.
        for sid in (running, idle):
            await prompt(server, sid, "again")
        assert await answers(server, running, 2) == ["working", "re: again"]
        assert await answers(server, idle, 1) == ["re: again"]
        assert len(launcher.started) == 3
        fresh = launcher.started[2]
        assert sorted(loaded(fresh)) == sorted(
            views[s]["agent_session_id"] for s in (running, idle)
        )
        assert (loaded(dying), loaded(living), fresh.sessions) == ([], [], 0)
        tg.cancel_scope.cancel()
