"""``POST /v1/sessions {"continue": id}``: an agent's saved session continued in a new server
session, its replayed history logged (flagged ``replay``), or refused. No process is started."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from kit.server import (
    FakeStreamLauncher,
    LoadingAgent,
    ScriptedLauncher,
    Served,
    make_config,
    served,
)

from gemwire.runners.acp import AcpOptions, AgentChannel, memory_channel_pair
from gemwire.server import create_app

pytestmark = pytest.mark.anyio

SAVED = "saved-1234"


class ReplayingAgent(LoadingAgent):
    """Loads any session by replaying one exchange of it first, as Gemini CLI does."""

    async def _answer(self, message: dict[str, Any]) -> None:
        if message["method"] == "session/load":
            sid = message["params"]["sessionId"]
            text = {"type": "text", "text": "what is 2+2?"}
            await self.update(sid, "user_message_chunk", content=text)
            await self.say(sid, "4")
        await super()._answer(message)


class ReplayingLauncher(ScriptedLauncher):
    def channel(self, options: AcpOptions) -> AgentChannel:
        if not self.loads:
            return super().channel(options)
        client_end, agent_end = memory_channel_pair()
        agent = ReplayingAgent(agent_end, name="scripted")
        self.started.append(agent)
        self.tg.start_soon(agent.run)
        return client_end


@asynccontextmanager
async def replaying_server(
    root: str, state_dir: str, *, loads: bool = True
) -> AsyncIterator[tuple[Served, ReplayingLauncher]]:
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            launcher = ReplayingLauncher(tg, loads=loads)
            app = create_app(
                make_config(root, state_dir),
                launcher=launcher,
                stream_launcher=FakeStreamLauncher(),
            )
            async with served(app) as server:
                yield server, launcher
            tg.cancel_scope.cancel()


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[str, str]:
    root = tmp_path / "root"
    root.mkdir()
    return str(root.resolve()), str(tmp_path / "state")


async def logged(server: Served, sid: str) -> list[dict[str, Any]]:
    response = await server.request(
        "GET", f"/v1/sessions/{sid}/events", headers={"Accept": "application/json"}
    )
    return list(response.json()["events"])


def shape(envelope: dict[str, Any]) -> tuple[Any, ...]:
    if "state" in envelope:
        return ("state", envelope["state"]["status"])
    event = envelope["event"]
    return (event["type"], event.get("text"), event.get("replay"))


async def test_a_saved_session_is_continued_with_its_history_logged(
    dirs: tuple[str, str],
) -> None:
    async with replaying_server(*dirs) as (server, launcher):
        response = await server.request(
            "POST", "/v1/sessions", json={"agent": "scripted", "continue": SAVED}
        )
        assert response.status_code == 201, response.text
        view = response.json()
        assert (view["agent_session_id"], view["status"], view["title"]) == (
            SAVED,
            "idle",
            "what is 2+2?",
        )
        envelopes = await logged(server, view["id"])
        loads = [
            m["params"] for m in launcher.started[0].received if "session/" in m.get("method", "")
        ]
        assert [(p["sessionId"], p["cwd"]) for p in loads] == [(SAVED, dirs[0])]
        prompted = await server.request(
            "POST", f"/v1/sessions/{view['id']}/prompt", json={"text": "and 3+3?"}
        )
        assert prompted.status_code == 202
    assert [shape(e) for e in envelopes] == [
        ("state", "starting"),
        ("session_started", None, None),
        ("user_message", "what is 2+2?", True),
        ("message_delta", "4", True),
        ("state", "idle"),
    ]
    assert [e["seq"] for e in envelopes] == [1, 2, 3, 4, 5]


async def test_an_agent_that_can_neither_resume_nor_load_is_409(dirs: tuple[str, str]) -> None:
    async with replaying_server(*dirs, loads=False) as (server, _):
        response = await server.request(
            "POST", "/v1/sessions", json={"agent": "scripted", "continue": SAVED}
        )
        listed = (await server.request("GET", "/v1/sessions")).json()["sessions"]
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["kind"] == "conflict"
    assert "cannot" in error["message"]
    assert listed == []


@pytest.mark.parametrize("value", ["", "a\nb", "x" * 257])
async def test_a_bad_session_id_to_continue_is_400(dirs: tuple[str, str], value: str) -> None:
    async with replaying_server(*dirs) as (server, launcher):
        response = await server.request(
            "POST", "/v1/sessions", json={"agent": "scripted", "continue": value}
        )
    assert (response.status_code, response.json()["error"]) == (
        400,
        {
            "kind": "bad_request",
            "message": '"continue" must be an agent session id (1 to 256 printable characters)',
        },
    )
    assert launcher.started == []


async def test_a_gemini_stream_session_continues_with_resume(dirs: tuple[str, str]) -> None:
    streams = FakeStreamLauncher()
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            app = create_app(
                make_config(*dirs), launcher=ScriptedLauncher(tg), stream_launcher=streams
            )
            async with served(app) as server:
                response = await server.request(
                    "POST", "/v1/sessions", json={"agent": "gemini-stream", "continue": SAVED}
                )
                sid = response.json()["id"]
                await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "hi"})
                while True:  # the log is the truth: polled until the turn ended
                    if ("state", "idle") in map(shape, (await logged(server, sid))[1:]):
                        break
                    await anyio.sleep(0.01)
            tg.cancel_scope.cancel()
    assert response.json()["agent_session_id"] == SAVED
    assert [r["resume"] for r in streams.runs] == [SAVED]
