"""Faults the server survives: a full disk ends one session alone, a damaged log is served
up to the damage, a turn the server died in is ended once when it starts again. Scripted
agents in this process; the full disk is a 2 MB tmpfs (root only: skipped otherwise)."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from kit.remote import StreamingASGITransport
from kit.server import BASE, TOKEN, Served, scripted_server

from gemwire.remote import connect
from gemwire.remote.api import Reconnect
from gemwire.testing import ScriptedAgent

pytestmark = pytest.mark.anyio

CHUNK = "x" * 65536


def kinds(envelopes: list[dict[str, Any]]) -> list[str]:
    return [
        e["event"]["type"] if "event" in e else f"state:{e['state']['status']}" for e in envelopes
    ]


async def logged(server: Served, sid: str) -> list[dict[str, Any]]:
    response = await server.request(
        "GET", f"/v1/sessions/{sid}/events", headers={"Accept": "application/json"}
    )
    assert response.status_code == 200, response.text
    return list(response.json()["events"])


async def tail(server: Served, sid: str, count: int) -> list[dict[str, Any]]:
    """The last ``count`` envelopes logged (a page holds at most 1 MiB)."""
    response = await server.request(
        "GET", f"/v1/sessions/{sid}/events", headers={"Accept": "application/json"}
    )
    after = response.json()["last_seq"] - count
    response = await server.request(
        "GET", f"/v1/sessions/{sid}/events?after={after}", headers={"Accept": "application/json"}
    )
    return list(response.json()["events"])


async def new_session(server: Served) -> str:
    response = await server.request("POST", "/v1/sessions", json={"agent": "scripted"})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


@pytest.fixture
def root(tmp_path: Path) -> str:
    (tmp_path / "root").mkdir()
    return str((tmp_path / "root").resolve())


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs, unmounted after the test."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


async def long_answer(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
    for _ in range(48):  # 3 MB: more than the disk holds
        await agent.say(sid, CHUNK)
    return "end_turn"


async def test_a_full_disk_ends_that_session_alone_and_the_server_stays_ready(
    root: str, small_disk: Path, tmp_path: Path
) -> None:
    async with scripted_server(root, str(small_disk / "state"), long_answer) as (server, _):
        other = await new_session(server)
        sid = await new_session(server)
        async with server.sse(f"/v1/sessions/{sid}/events") as stream:
            prompt = await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "go"})
            assert prompt.status_code == 202
            with anyio.fail_after(20):
                await stream.ended.wait()
        last = stream.envelopes()[-1]
        why = last["state"]["detail"]
        assert last["state"]["status"] == "stopped"
        assert why.startswith("its log could not be written ([Errno 28] No space left on device")
        assert why.endswith("): the session was stopped")
        ready = await server.request("GET", "/ready")
        assert (ready.status_code, ready.json()) == (
            200,
            {"ready": True, "degraded": [{"session": sid, "reason": why}]},
        )
        assert (await server.request("GET", f"/v1/sessions/{other}")).json()["status"] == "idle"
        with anyio.fail_after(20):  # its agent stops once its turn has ended
            await server.app.state.gemwire.sessions.get(sid).agent_done.wait()
        view = (await server.request("GET", f"/v1/sessions/{sid}")).json()
        assert view["status"] == "stopped"
        again = await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "go"})
        assert again.status_code == 409
        assert again.json()["error"]["message"] == (
            f"session {sid} is out of service until the server restarts: {why}"
        )
        # What was logged ends in a whole line, and is served.
        envelopes = await logged(server, sid)
        assert kinds(envelopes)[:5] == [
            "state:starting",
            "session_started",
            "state:idle",
            "state:running",
            "user_message",
        ]
        assert set(kinds(envelopes)[5:]) == {"message_delta"}
    # The server stopped cleanly (the lifespan ended): and a restart ends the turn it left.
    roomy = tmp_path / "roomy"
    shutil.copytree(small_disk / "state", roomy)  # the folder moved to a disk with room
    async with scripted_server(root, str(roomy)) as (server, _):
        envelopes = await tail(server, sid, 3)
        assert kinds(envelopes) == ["message_delta", "turn_completed", "state:stopped"]
        assert (await server.request("GET", "/ready")).json() == {"ready": True}


async def test_a_remote_turn_whose_session_log_fails_ends_crashed(
    root: str, small_disk: Path
) -> None:
    async with (
        scripted_server(root, str(small_disk / "state"), long_answer) as (served, _),
        anyio.create_task_group() as tg,
    ):
        transport = StreamingASGITransport(served.app, tg)
        fast = Reconnect(attempts=1, backoff=0.01)
        async with connect(BASE, token=TOKEN, transport=transport, reconnect=fast) as remote:
            session = await remote.new_session("scripted", cwd=root)
            with anyio.fail_after(20):
                async with session.prompt("go") as turn:
                    ended = [event async for event in turn][-1]
        tg.cancel_scope.cancel()
    assert ended.type == "turn_completed"
    assert turn.result.error is not None
    assert (turn.result.ok, turn.result.stop_reason, turn.result.error.kind) == (
        False,
        "error",
        "crashed",
    )
    assert turn.result.error.message.startswith(
        "the server stopped the session (its log could not be written ([Errno 28]"
    )


def damage_fifo(log: Path) -> None:
    log.unlink()
    os.mkfifo(log)


def damage_folder(log: Path) -> None:
    log.unlink()
    log.mkdir()


def damage_middle(log: Path) -> None:
    lines = log.read_bytes().splitlines(keepends=True)
    lines[2] = b'{"seq":3,"state":{"status":\n'
    log.write_bytes(b"".join(lines))


def damage_truncated(log: Path) -> None:
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:2]) + lines[2][:9] + b"\n")


@pytest.mark.parametrize(
    ("damage", "served", "what"),
    [
        (damage_fifo, 0, "is a FIFO, not a log"),
        (damage_folder, 0, "is a folder, not a log"),
        (damage_middle, 2, "line 3 of"),
        (damage_truncated, 2, "line 3 of"),
    ],
)
async def test_a_damaged_log_is_served_up_to_the_damage_and_the_server_starts(
    root: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    damage: Any,
    served: int,
    what: str,
) -> None:
    state = str(tmp_path / "state")
    async with scripted_server(root, state) as (server, _):
        sid = await new_session(server)
        good = await new_session(server)
        before = await logged(server, sid)
    damage(Path(state) / "sessions" / sid / "events.jsonl")
    caplog.set_level(logging.WARNING, "gemwire.server")
    async with scripted_server(root, state) as (server, _):
        envelopes = await logged(server, sid)
        ready = (await server.request("GET", "/ready")).json()
        prompt = await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "hi"})
        works = await server.request("POST", f"/v1/sessions/{good}/prompt", json={"text": "hi"})
    assert envelopes == before[:served]
    (degraded,) = ready["degraded"]
    assert degraded["session"] == sid
    assert degraded["reason"].startswith("its log is damaged: ")
    assert what in degraded["reason"]
    assert (prompt.status_code, works.status_code) == (409, 202)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(m.startswith(f"session {sid}: its log is damaged: ") for m in warnings), warnings


async def hang(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
    await agent.say(sid, "Working")
    await agent.cancelled.wait()
    return "cancelled"


async def test_a_turn_the_server_died_in_is_ended_once_when_it_starts_again(
    root: str, tmp_path: Path
) -> None:
    state, killed = tmp_path / "state", tmp_path / "killed"
    async with scripted_server(root, str(state), hang) as (server, _):
        sid = await new_session(server)
        async with server.sse(f"/v1/sessions/{sid}/events") as stream:
            await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "go"})
            await stream.wait_for(6)  # its message_delta is logged
            # What a SIGKILL leaves: the state folder as it is mid-turn.
            shutil.copytree(state, killed)
    async with scripted_server(root, str(killed)) as (server, _):
        envelopes = await logged(server, sid)
        view = (await server.request("GET", f"/v1/sessions/{sid}")).json()
    assert kinds(envelopes) == [
        "state:starting",
        "session_started",
        "state:idle",
        "state:running",
        "user_message",
        "message_delta",
        "turn_completed",
        "state:stopped",
    ]
    completed, stopped = envelopes[-2]["event"], envelopes[-1]["state"]
    assert (completed["ok"], completed["stop_reason"], completed["error"]["kind"]) == (
        False,
        "error",
        "crashed",
    )
    assert completed["error"]["message"] == (
        "the server stopped during this turn (it was killed, crashed or lost power): "
        "the turn never ended"
    )
    assert stopped == {
        "status": "stopped",
        "detail": "the server stopped (it was killed, or crashed)",
    }
    assert view["status"] == "stopped"
    async with scripted_server(root, str(killed)) as (server, _):
        assert await logged(server, sid) == envelopes  # appended once
