"""The limits and answers the red team found loose: ``--max-sessions`` under concurrent
creates, a bad ``?limit=``, a WebSocket op over the body limit, a second answer to a
permission, and a permission the server denies on its own (said as such)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from kit.server import LoadingAgent, Served, scripted_server

from gemwire.runners.acp import AcpOptions, AgentChannel, memory_channel_pair
from gemwire.testing import ScriptedAgent

pytestmark = pytest.mark.anyio

PERMISSION = {
    "toolCall": {"toolCallId": "t1", "title": "Write a.txt", "kind": "edit"},
    "options": [
        {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
        {"optionId": "no", "name": "Reject", "kind": "reject_once"},
    ],
}


async def ask_permission(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
    await agent.request("session/request_permission", {"sessionId": sid, **PERMISSION})
    return "end_turn"


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "root").mkdir()
    return str((tmp_path / "root").resolve()), str(tmp_path / "state")


async def new_session(server: Served) -> str:
    response = await server.request("POST", "/v1/sessions", json={"agent": "scripted"})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def notices(envelopes: list[dict[str, Any]]) -> list[str]:
    return [e["event"]["message"] for e in envelopes if e.get("event", {}).get("type") == "notice"]


class SlowModes(LoadingAgent):
    """Answers ``session/set_mode`` once ``gate`` opens; ``asked`` counts those waiting."""

    gate: anyio.Event
    asked: list[anyio.Event]

    async def respond(self, message: dict[str, Any]) -> None:
        if message["method"] == "session/set_mode":
            SlowModes.asked.pop(0).set()
            await SlowModes.gate.wait()
        await super().respond(message)


async def test_concurrent_creates_that_set_a_mode_never_pass_the_limit(
    dirs: tuple[str, str],
) -> None:
    SlowModes.gate, SlowModes.asked = anyio.Event(), [anyio.Event() for _ in range(6)]
    # A process a session: the agents started count the sessions.
    async with scripted_server(*dirs, max_sessions=2, sessions_per_agent=1) as (server, launcher):

        def channel(options: AcpOptions) -> AgentChannel:
            client_end, agent_end = memory_channel_pair()
            agent = SlowModes(agent_end)
            launcher.started.append(agent)
            launcher.tg.start_soon(agent.run)
            return client_end

        launcher.channel = channel  # type: ignore[method-assign]
        statuses: list[int] = []

        async def create() -> None:
            body = {"agent": "scripted", "mode": "yolo"}
            statuses.append((await server.request("POST", "/v1/sessions", json=body)).status_code)

        async with anyio.create_task_group() as tg:
            waiting = SlowModes.asked[:2]
            for _ in range(2):
                tg.start_soon(create)
            for asked in waiting:
                await asked.wait()  # both are setting their mode: their agents run
            for _ in range(4):
                await create()
            SlowModes.gate.set()
        assert sorted(statuses) == [201, 201, 429, 429, 429, 429]
        assert len(launcher.started) == 2


@pytest.mark.parametrize("limit", ["\u00b2", "1" * 5000, "0", "-1", "x"])
async def test_a_bad_limit_is_a_400(dirs: tuple[str, str], limit: str) -> None:
    async with scripted_server(*dirs) as (server, _):
        sid = await new_session(server)
        response = await server.request(
            "GET",
            f"/v1/sessions/{sid}/events",
            params={"limit": limit},
            headers={"Accept": "application/json"},
        )
    assert response.status_code == 400
    assert response.json()["error"]["message"] == (
        f"limit must be a whole number >= 1, not {limit[:40]!r}"
    )


async def test_a_websocket_op_over_the_body_limit_is_refused_as_a_body_would_be(
    dirs: tuple[str, str],
) -> None:
    async with scripted_server(*dirs, max_body_bytes=1000) as (server, _):
        sid = await new_session(server)
        async with server.ws(f"/v1/sessions/{sid}/ws") as socket:
            await socket.send_json({"op": "prompt", "text": "x" * 1000})
            while "reply" not in (reply := await socket.receive_json()):
                pass
    assert reply == {
        "reply": None,
        "ok": False,
        "error": {"kind": "too_large", "message": "an op is at most 1000 bytes, as a request body"},
    }


async def test_a_second_answer_to_a_permission_is_a_409(dirs: tuple[str, str]) -> None:
    async with scripted_server(*dirs, on_prompt=ask_permission) as (server, _):
        sid = await new_session(server)
        async with server.sse(f"/v1/sessions/{sid}/events") as stream:
            await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "go"})
            requested = (await stream.wait_for(7))[6]["event"]
            url = f"/v1/sessions/{sid}/permissions/{requested['request_id']}"
            first = await server.request("POST", url, json={"option_id": "yes"})
            await stream.wait_for(8)  # permission_resolved: the request is gone
            second = await server.request("POST", url, json={"option_id": "no"})
    assert first.status_code == 200
    assert second.status_code == 409
    assert second.json()["error"]["message"] == (
        f"permission request {requested['request_id']!r} is already answered"
    )


async def test_a_permission_the_server_denies_alone_says_so(dirs: tuple[str, str]) -> None:
    async with scripted_server(
        *dirs, on_prompt=ask_permission, permission_grace=0, sessions_per_agent=1
    ) as (
        server,
        _,
    ):
        unwatched = await new_session(server)
        await server.request("POST", f"/v1/sessions/{unwatched}/prompt", json={"text": "go"})
        left = await new_session(server)
        async with server.sse(f"/v1/sessions/{left}/events") as stream:
            await server.request("POST", f"/v1/sessions/{left}/prompt", json={"text": "go"})
            await stream.wait_for(7)  # permission_requested: then the client leaves
        logged = {}
        for sid in (unwatched, left):
            async with server.sse(f"/v1/sessions/{sid}/events") as stream:
                while "turn_completed" not in stream.raw.decode():
                    await stream.wait_for(len(stream.envelopes()) + 1)
                logged[sid] = stream.envelopes()
    assert notices(logged[unwatched]) == [
        "permission request 0 denied: no client (no client follows the session)"
    ]
    assert notices(logged[left]) == [
        "permission request 0 denied: no client (the last client left 0 s ago)"
    ]


async def test_a_request_head_over_64_kib_read_at_once_is_a_431(dirs: tuple[str, str]) -> None:
    async with scripted_server(*dirs) as (server, _):
        response = await server.request("GET", "/v1/sessions", headers={"X-Pad": "x" * 70_000})
        small = await server.request("GET", "/v1/sessions", headers={"X-Pad": "x" * 60_000})
    assert response.status_code == 431
    assert response.json() == {
        "error": {"kind": "too_large", "message": "the request head is over 65536 bytes"}
    }
    assert small.status_code == 200
