"""A session (or a batch) is continued only where a new one would be allowed: its folder is
confined to the roots again on every start, continue and retry, so a folder replaced by a
symlink out of the roots, a narrower ``--root`` after a restart, or a ``session.json``
edited to name another folder never starts an agent there. No process is started."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from kit.server import FakeStreamLauncher, Served, scripted_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``root/narrow/w1``, ``root/narrow/w2`` and ``outside`` (beside ``root``)."""
    for folder in ("root/narrow/w1", "root/narrow/w2", "outside"):
        (tmp_path / folder).mkdir(parents=True)
    return tmp_path.resolve()


async def logged(server: Served, sid: str) -> list[dict[str, Any]]:
    response = await server.request(
        "GET", f"/v1/sessions/{sid}/events", headers={"Accept": "application/json"}
    )
    return list(response.json()["events"])


async def create(server: Served, agent: str, cwd: str) -> str:
    response = await server.request("POST", "/v1/sessions", json={"agent": agent, "cwd": cwd})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def notices(envelopes: list[dict[str, Any]]) -> list[str]:
    return [e["event"]["message"] for e in envelopes if e.get("event", {}).get("type") == "notice"]


@pytest.mark.parametrize("agent", ["scripted", "gemini-stream"])
async def test_a_folder_replaced_by_a_symlink_out_of_the_roots_is_not_continued(
    tree: Path, agent: str
) -> None:
    root, state = str(tree / "root"), str(tree / "state")
    streams = FakeStreamLauncher()
    async with scripted_server(root, state, stream_launcher=streams) as (server, _):
        sid = await create(server, agent, "narrow/w2")
    w2 = tree / "root" / "narrow" / "w2"
    w2.rmdir()
    w2.symlink_to(Path("..", "..", "outside"))
    async with scripted_server(root, state, stream_launcher=streams) as (server, launcher):
        prompted = await server.request(
            "POST", f"/v1/sessions/{sid}/prompt", json={"text": "write there"}
        )
        mode = await server.request("POST", f"/v1/sessions/{sid}/mode", json={"mode_id": "yolo"})
        envelopes = await logged(server, sid)
        view = (await server.request("GET", f"/v1/sessions/{sid}")).json()
    message = f"'{w2}' is outside the server's roots ({root})"
    assert (prompted.status_code, prompted.json()) == (
        403,
        {"error": {"kind": "forbidden", "message": message}},
    )
    assert launcher.started == []
    assert streams.runs == []
    assert notices(envelopes)[0] == f"session {sid} not continued: {message}"
    assert view["status"] == "stopped"
    if agent == "scripted":  # a setting continues the session too
        assert mode.status_code == 403
        assert notices(envelopes) == [f"session {sid} not continued: {message}"] * 2


async def test_a_narrower_root_after_a_restart_refuses_an_older_session(tree: Path) -> None:
    state = str(tree / "state")
    async with scripted_server(str(tree / "root" / "narrow"), state) as (server, _):
        sid = await create(server, "scripted", "w2")
    narrow = str(tree / "root" / "narrow" / "w1")
    async with scripted_server(narrow, state) as (server, launcher):
        refused_new = await server.request(
            "POST", "/v1/sessions", json={"agent": "scripted", "cwd": str(tree / "root/narrow/w2")}
        )
        prompted = await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "x"})
    assert refused_new.status_code == 403
    assert prompted.status_code == 403
    assert prompted.json()["error"]["kind"] == "forbidden"
    assert launcher.started == []


async def test_a_session_json_edited_to_name_another_folder_is_refused(tree: Path) -> None:
    root, state = str(tree / "root"), str(tree / "state")
    async with scripted_server(root, state) as (server, _):
        sid = await create(server, "scripted", "narrow/w1")
    record_path = tree / "state" / "sessions" / sid / "session.json"
    record = json.loads(record_path.read_text())
    record["cwd"] = str(tree / "outside")
    record_path.write_text(json.dumps(record))
    async with scripted_server(root, state) as (server, launcher):
        prompted = await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "x"})
    assert prompted.status_code == 403
    assert launcher.started == []


async def test_a_folder_swapped_for_a_link_inside_the_roots_is_refused(tree: Path) -> None:
    """Still under a root, but no longer the folder the session was made in."""
    root, state = str(tree / "root"), str(tree / "state")
    async with scripted_server(root, state) as (server, _):
        sid = await create(server, "scripted", "narrow/w2")
    w2 = tree / "root" / "narrow" / "w2"
    w2.rmdir()
    w2.symlink_to("w1")
    async with scripted_server(root, state) as (server, launcher):
        prompted = await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "x"})
    assert (prompted.status_code, prompted.json()["error"]["message"]) == (
        403,
        (
            f"'{w2}' now leads to {tree / 'root' / 'narrow' / 'w1'}, not to the folder the "
            "session was made in"
        ),
    )
    assert launcher.started == []


async def test_a_session_in_a_folder_still_under_the_roots_continues(tree: Path) -> None:
    root, state = str(tree / "root"), str(tree / "state")
    async with scripted_server(root, state) as (server, _):
        sid = await create(server, "scripted", "narrow/w1")
    async with scripted_server(root, state) as (server, launcher):
        prompted = await server.request("POST", f"/v1/sessions/{sid}/prompt", json={"text": "x"})
        with anyio.fail_after(10):
            while True:  # the log is the truth: polled until the turn ended
                envelopes = await logged(server, sid)
                if any(e.get("event", {}).get("type") == "turn_completed" for e in envelopes):
                    break
                await anyio.sleep(0.01)
    assert prompted.status_code == 202
    assert len(launcher.started) == 1
    assert launcher.started[0].received[1]["params"]["cwd"] == str(tree / "root/narrow/w1")
