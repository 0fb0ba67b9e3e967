"""``gemini-stream`` sessions: one run a prompt, resumed with the CLI's session id (no process)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from kit.server import FakeStreamLauncher, Served, scripted_server

from gemwire.server.stream import gemini_options

pytestmark = pytest.mark.anyio


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[str, str]:
    root = tmp_path / "root"
    root.mkdir()
    return str(root.resolve()), str(tmp_path / "state")


def kinds(envelopes: list[dict[str, Any]]) -> list[str]:
    return [
        e["event"]["type"] if "event" in e else f"state:{e['state']['status']}" for e in envelopes
    ]


async def logged(server: Served, sid: str) -> list[dict[str, Any]]:
    response = await server.request(
        "GET", f"/v1/sessions/{sid}/events", headers={"Accept": "application/json"}
    )
    return list(response.json()["events"])


async def wait_for(server: Served, sid: str, kind: str, count: int = 1) -> list[dict[str, Any]]:
    """The log once it holds ``count`` envelopes of ``kind`` (polled: the log is the truth)."""
    while True:
        envelopes = await logged(server, sid)
        if kinds(envelopes).count(kind) >= count:
            return envelopes
        await anyio.sleep(0.01)


async def test_each_prompt_is_a_run_resuming_the_first(dirs: tuple[str, str]) -> None:
    runs = FakeStreamLauncher()
    async with scripted_server(*dirs, stream_launcher=runs) as (server, launcher):
        body = {"agent": "gemini-stream", "permissions": "edits", "model": "flash"}
        created = await server.request("POST", "/v1/sessions", json=body)
        assert created.status_code == 201
        view = created.json()
        assert (view["status"], view["agent_session_id"], view["modes"]) == ("idle", None, None)
        assert view["current_model"] == "flash"
        sid = view["id"]
        first = await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "one"})
        assert first.json() == {"after": 1}
        await wait_for(server, sid, "turn_completed")
        chosen = await server.request("POST", f"/v1/sessions/{sid}/model", json={"model_id": "pro"})
        assert chosen.json()["current_model"] == "pro"
        await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "two"})
        envelopes = await wait_for(server, sid, "state:idle", 3)
        view = (await server.request("GET", f"/v1/sessions/{sid}")).json()
    assert launcher.started == []  # no ACP agent
    assert runs.runs == [
        {"prompt": "one", "resume": None, "permissions": "edits", "model": "flash"},
        {"prompt": "two", "resume": "g-1", "permissions": "edits", "model": "pro"},
    ]
    assert kinds(envelopes) == [
        "state:idle",
        *["state:running", "session_started", "user_message", "message_delta", "turn_completed"],
        "state:idle",
        *["state:running", "session_started", "user_message", "message_delta", "turn_completed"],
        "state:idle",
    ]
    assert (view["agent_session_id"], view["title"], view["last_seq"]) == ("g-1", "one", 13)


async def test_a_streamed_turn_is_cancelled_and_has_no_modes(dirs: tuple[str, str]) -> None:
    async with scripted_server(*dirs) as (server, _):
        sid = (
            await server.request("POST", "/v1/sessions", json={"agent": "gemini-stream"})
        ).json()["id"]
        await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "hang"})
        await wait_for(server, sid, "message_delta")
        busy = await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "x"})
        assert busy.status_code == 409
        assert (await server.request("POST", f"/v1/sessions/{sid}/cancel")).status_code == 202
        envelopes = await wait_for(server, sid, "state:idle", 2)
        mode = await server.request("POST", f"/v1/sessions/{sid}/mode", json={"mode_id": "yolo"})
        assert mode.status_code == 400
        blocks = [{"type": "image", "data": "", "mimeType": "image/png"}]
        image = await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"prompt": blocks})
        assert (image.status_code, image.json()["error"]["message"]) == (
            400,
            "gemini-stream takes text prompts only",
        )
    completed = [e["event"] for e in envelopes if kinds([e]) == ["turn_completed"]]
    assert [c["stop_reason"] for c in completed] == ["cancelled"]


async def test_shutdown_ends_a_streamed_turn_once(dirs: tuple[str, str]) -> None:
    async with scripted_server(*dirs) as (server, _):
        sid = (
            await server.request("POST", "/v1/sessions", json={"agent": "gemini-stream"})
        ).json()["id"]
        await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "hang"})
        await wait_for(server, sid, "message_delta")
        await server.app.state.gemwire.sessions.drain()
    lines = (Path(dirs[1]) / "sessions" / sid / "events.jsonl").read_text().splitlines()

    envelopes = [json.loads(line) for line in lines]
    assert kinds(envelopes)[-2:] == ["turn_completed", "state:stopped"]
    assert envelopes[-1]["state"] == {"status": "stopped", "detail": "server shutdown"}


def test_the_presets_choose_the_approval_mode_and_the_token_stays_out() -> None:
    environ = {"GEMWIRE_TOKEN": "t", "HOME": "/h"}
    modes = {
        preset: gemini_options("/w", environ, resume=None, permissions=preset, model=None)
        for preset in ("ask", "deny", "reads", "edits", "all")
    }
    assert {p: o.approval_mode for p, o in modes.items()} == {
        "ask": "default",
        "deny": "default",
        "reads": "default",
        "edits": "auto_edit",
        "all": "yolo",
    }
    assert (modes["ask"].env, modes["ask"].inherit_env) == ({"HOME": "/h"}, False)


async def test_streamed_turns_count_against_max_sessions(dirs: tuple[str, str]) -> None:
    async with scripted_server(*dirs, max_sessions=2) as (server, _):
        sids = [
            (await server.request("POST", "/v1/sessions", json={"agent": "gemini-stream"})).json()[
                "id"
            ]
            for _ in range(3)
        ]
        prompted = []
        for sid in sids:
            body = {"text": "hang"}
            prompted.append(await server.request("POST", f"/v1/sessions/{sid}/prompt", json=body))
        acp = await server.request("POST", "/v1/sessions", json={"agent": "scripted"})
        await server.request("POST", f"/v1/sessions/{sids[0]}/cancel")
        await wait_for(server, sids[0], "state:idle", 2)  # that turn ended: room for one
        again = await server.request("POST", f"/v1/sessions/{sids[2]}/prompt", json=body)
    assert [p.status_code for p in prompted] == [202, 202, 429]
    assert prompted[2].json()["error"] == {
        "kind": "limit",
        "message": "2 sessions run an agent (--max-sessions 2): close one (DELETE "
        "/v1/sessions/{id}) or wait for one to stop (an idle session stops after "
        "--idle-timeout 3600 s)",
    }
    assert acp.status_code == 429
    assert again.status_code == 202


async def test_no_turn_starts_once_shutdown_began(dirs: tuple[str, str]) -> None:
    runs = FakeStreamLauncher()
    async with scripted_server(*dirs, stream_launcher=runs) as (server, launcher):
        sids = [
            (await server.request("POST", "/v1/sessions", json={"agent": agent})).json()["id"]
            for agent in ("gemini-stream", "scripted")
        ]
        await server.app.state.gemwire.sessions.drain()
        prompted = [
            await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "x"})
            for sid in sids
        ]
    shutting_down = {"error": {"kind": "limit", "message": "the server is shutting down"}}
    assert [(p.status_code, p.json()) for p in prompted] == [(503, shutting_down)] * 2
    assert runs.runs == []
    assert len(launcher.started) == 1  # the scripted session's own, stopped by the drain
