"""The server at the wire (`wire_kit`: uvicorn as ``gemwire serve`` runs it, in a thread):
clients that never read, never finish a request or send what a route does not take, and a
shutdown with such clients connected. Nothing is logged as an ASGI error, nothing grows
without bound, nothing is kept for ever."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import pytest
from acp_scripted import ScriptedAgent
from wire_kit import ThreadLauncher, Wire, until, wire_server

from gemwire.server import routes_sessions
from gemwire.server.streams import SUBSCRIBER_BUFFER

CHUNK = "x" * 8000
FLOOD = 2000
"""Chunks of a flooding turn: 16 MB, far more than the sockets' buffers hold."""
BOUND = 512 * 1024
"""What a connection may hold waiting to be sent (uvicorn's high-water mark is 64 KiB;
the server writes at most 64 KiB past it)."""


async def flood(agent: ScriptedAgent, sid: str, params: dict[str, Any]) -> str:
    for _ in range(FLOOD):
        await agent.say(sid, CHUNK)
    return "end_turn"


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[str, str]:
    root = tmp_path / "root"
    root.mkdir()
    return str(root.resolve()), str(tmp_path / "state")


def new_session(wire: Wire) -> str:
    created = wire.http.post("/v1/sessions", json={"agent": "scripted"})
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


def turn_completed(wire: Wire, sid: str) -> bool:
    view = wire.http.get(f"/v1/sessions/{sid}").json()
    return bool(view["status"] == "idle" and view["last_seq"] > 4)


def errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_stalled_sse_client_costs_a_bounded_buffer_and_no_asgi_error(
    dirs: tuple[str, str], caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The keep-alive deadline passes many times while the stream's write is blocked.
    monkeypatch.setattr(routes_sessions, "KEEPALIVE", 0.05)
    caplog.set_level(logging.WARNING)
    with wire_server(*dirs, ThreadLauncher(flood)) as wire:
        sid = new_session(wire)
        stalled = wire.connect(rcvbuf=4096)
        stalled.sendall(wire.request_head("GET", f"/v1/sessions/{sid}/events"))
        assert wire.http.post(f"/v1/sessions/{sid}/prompt", json={"text": "go"}).status_code == 202
        until(lambda: turn_completed(wire, sid), timeout=60)  # the agent was not held back
        late = wire.connect(rcvbuf=4096)  # this one reads the whole turn from the log
        late.sendall(wire.request_head("GET", f"/v1/sessions/{sid}/events?after=0"))
        session = wire.state.sessions.get(sid)  # type: ignore[union-attr]
        until(lambda: session.stream.subscribers == 2)
        time.sleep(20 * 0.05)  # many keep-alive deadlines, the streams' writes still blocked
        assert max(wire.write_buffers()) <= BOUND
        assert session.stream.buffered <= SUBSCRIBER_BUFFER
        assert wire.http.get("/health").status_code == 200
        stalled.close()
        late.close()
        until(lambda: session.stream.subscribers == 0)
    assert errors(caplog) == []


def ws_head(wire: Wire, path: str) -> bytes:
    """A WebSocket handshake with the token, as a raw client sends it."""
    return wire.request_head("GET", path).replace(
        b"\r\n\r\n",
        b"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    )


def test_shutdown_with_stalled_clients_ends_within_docker_s_grace(
    dirs: tuple[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    """Five SSE and five WebSocket clients that never read: SIGTERM still ends in well
    under ten seconds (docker's grace before SIGKILL), and once it began no new
    connection is accepted."""
    caplog.set_level(logging.WARNING)
    with wire_server(*dirs, ThreadLauncher(flood)) as wire:
        sid = new_session(wire)
        assert wire.http.post(f"/v1/sessions/{sid}/prompt", json={"text": "go"}).status_code == 202
        until(lambda: turn_completed(wire, sid), timeout=60)
        stalled = []
        for n in range(10):
            sock = wire.connect(rcvbuf=4096)
            path = f"/v1/sessions/{sid}/{'events' if n % 2 else 'ws'}?after=0"
            sock.sendall(wire.request_head("GET", path) if n % 2 else ws_head(wire, path))
            stalled.append(sock)
        session = wire.state.sessions.get(sid)  # type: ignore[union-attr]
        until(lambda: session.stream.subscribers == 10)
        until(lambda: len(wire.write_buffers()) == 10 and min(wire.write_buffers()) > 0)
        wire.server.should_exit = True
        until(lambda: wire.state.shutting_down.is_set())
        with pytest.raises(ConnectionRefusedError):
            wire.connect().close()
        took = wire.stop()
        for sock in stalled:
            sock.close()
    assert took < 7
    assert errors(caplog) == []
