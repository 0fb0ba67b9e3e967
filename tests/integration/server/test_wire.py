"""The server at the wire (`kit.wire`: hypercorn as ``gemwire serve`` runs it, in a thread):
clients that never read, never finish a request or send what a route does not take, and a
shutdown with such clients connected. Nothing is logged as an ASGI error, nothing grows
without bound, nothing is kept for ever."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kit.server import auth
from kit.waiting import eventually_blocking
from kit.wire import ThreadLauncher, Wire, wire_server

from gemwire.server import routes_sessions, run, security
from gemwire.server.streams import SUBSCRIBER_BUFFER
from gemwire.testing import ScriptedAgent

CHUNK = "x" * 8000
FLOOD = 2000
"""Chunks of a flooding turn: 16 MB, far more than the sockets' buffers hold."""
BOUND = 512 * 1024
"""What a connection may hold waiting to be sent (asyncio's high-water mark is 64 KiB;
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
        eventually_blocking(
            lambda: turn_completed(wire, sid), timeout=60
        )  # the agent was not held back
        late = wire.connect(rcvbuf=4096)  # this one reads the whole turn from the log
        late.sendall(wire.request_head("GET", f"/v1/sessions/{sid}/events?after=0"))
        session = wire.state.sessions.get(sid)  # type: ignore[union-attr]
        eventually_blocking(lambda: session.stream.subscribers == 2)
        time.sleep(20 * 0.05)  # many keep-alive deadlines, the streams' writes still blocked
        assert max(wire.write_buffers()) <= BOUND
        assert session.stream.buffered <= SUBSCRIBER_BUFFER
        assert wire.http.get("/health").status_code == 200
        stalled.close()
        late.close()
        eventually_blocking(lambda: session.stream.subscribers == 0)
    assert errors(caplog) == []


def test_an_idle_sse_stream_gets_keep_alives_and_a_stalled_one_is_left(
    dirs: tuple[str, str], caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One timer a stream (not a deadline a write): a keep-alive comment once nothing was
    written for KEEPALIVE, and a client that takes no write for SEND_TIMEOUT is left."""
    monkeypatch.setattr(routes_sessions, "KEEPALIVE", 0.05)
    monkeypatch.setattr(routes_sessions, "SEND_TIMEOUT", 1.0)
    caplog.set_level(logging.WARNING)
    with wire_server(*dirs, ThreadLauncher(flood)) as wire:
        sid = new_session(wire)
        idle = wire.connect()
        idle.sendall(wire.request_head("GET", f"/v1/sessions/{sid}/events"))
        read = b""
        while read.count(b": keep-alive\n\n") < 3:
            data = idle.recv(65536)
            assert data, read
            read += data
        head, body = read.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 200"), head
        # What the log held, then keep-alives alone while nothing happens.
        assert body.index(b": gemwire\n\n") < body.index(b": keep-alive\n\n"), body
        last_event = body.rindex(b"event: gemwire")
        assert body.index(b": keep-alive\n\n") > last_event, body
        session = wire.state.sessions.get(sid)  # type: ignore[union-attr]
        idle.close()
        eventually_blocking(lambda: session.stream.subscribers == 0)
        stalled = wire.connect(rcvbuf=4096)
        stalled.sendall(wire.request_head("GET", f"/v1/sessions/{sid}/events"))
        eventually_blocking(lambda: session.stream.subscribers == 1)
        assert wire.http.post(f"/v1/sessions/{sid}/prompt", json={"text": "go"}).status_code == 202
        eventually_blocking(lambda: turn_completed(wire, sid), timeout=60)
        # Its write waited past SEND_TIMEOUT: the stream ended, its subscription gone.
        eventually_blocking(lambda: session.stream.subscribers == 0, timeout=30)
        stalled.close()
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
        eventually_blocking(lambda: turn_completed(wire, sid), timeout=60)
        stalled = []
        for n in range(10):
            sock = wire.connect(rcvbuf=4096)
            path = f"/v1/sessions/{sid}/{'events' if n % 2 else 'ws'}?after=0"
            sock.sendall(wire.request_head("GET", path) if n % 2 else ws_head(wire, path))
            stalled.append(sock)
        session = wire.state.sessions.get(sid)  # type: ignore[union-attr]
        eventually_blocking(lambda: session.stream.subscribers == 10)
        # (The test's own keep-alive connection holds nothing: it is not waited out.)
        eventually_blocking(lambda: sum(size > 0 for size in wire.write_buffers()) == 10)
        wire.stopping.set()
        eventually_blocking(lambda: wire.state.shutting_down.is_set())
        with pytest.raises(ConnectionRefusedError):
            wire.connect().close()
        took = wire.stop()
        for sock in stalled:
            sock.close()
    assert took < 7
    assert errors(caplog) == []


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed ``sock`` (what it sent before, if anything, is read)."""
    sock.setblocking(False)
    try:
        while data := sock.recv(65536):
            del data
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True
    return True


def test_connections_that_never_finish_a_request_are_closed(
    dirs: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run, "HEAD_TIMEOUT", 0.5)
    monkeypatch.setattr(security, "BODY_TIMEOUT", 0.5)
    with wire_server(*dirs) as wire:
        silent = [wire.connect() for _ in range(20)]
        half = [wire.connect() for _ in range(20)]
        for sock in half:
            sock.sendall(wire.request_head("GET", "/v1/sessions")[:30])
        after_one = wire.connect()  # a whole request, then nothing
        after_one.sendall(wire.request_head("GET", "/health"))
        body = wire.connect()
        head = wire.request_head("POST", "/v1/sessions").replace(
            b"\r\n\r\n", b"\r\nContent-Length: 100\r\n\r\n"
        )
        body.sendall(head + b'{"agent": ')  # and the rest never comes
        try:
            eventually_blocking(
                lambda: all(closed_by_server(s) for s in [*silent, *half, after_one])
            )
            body.setblocking(True)
            answer = body.recv(65536)
            assert answer.startswith(b"HTTP/1.1 408 "), answer
            assert answer.endswith(
                b'{"error":{"kind":"timeout","message":"the request body did not come '
                b'within 0.5 s"}}'
            )
            assert wire.http.get("/health").status_code == 200
        finally:
            for sock in [*silent, *half, after_one, body]:
                sock.close()


def test_requests_beyond_the_connection_limit_are_503(
    dirs: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run, "MAX_CONNECTIONS", 10)
    with wire_server(*dirs) as wire:
        idle = [wire.connect() for _ in range(10)]
        try:
            eventually_blocking(lambda: len(wire.server.writers) == 10)
            over = wire.connect()
            over.sendall(wire.request_head("GET", "/health"))
            answer = over.recv(65536)
            over.close()
        finally:
            for sock in idle:
                sock.close()
        eventually_blocking(lambda: len(wire.server.writers) == 0)
        assert wire.http.get("/health").status_code == 200
    assert answer.startswith(b"HTTP/1.1 503 ")


@pytest.mark.anyio
@pytest.mark.parametrize("framing", ["content-length", "chunked"])
async def test_a_body_over_the_limit_is_413_while_the_client_still_sends_it(
    dirs: tuple[str, str], framing: str
) -> None:
    """The answer comes before the client has sent its body; the connection is closed
    lingering (`run.LINGER`), so the client reads the 413 rather than a reset (20 MiB: far
    more than the sockets' buffers hold; httpx's async client, which reads the answer only
    once it has sent the body)."""
    big = b" " * (20 * 1024 * 1024)

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(320):
            yield big[:65536]

    content = big if framing == "content-length" else chunks()
    with wire_server(*dirs) as wire:
        async with httpx.AsyncClient(base_url=wire.base, headers=auth(), timeout=30) as client:
            for _ in range(2):
                answer = await client.post(
                    "/v1/sessions", content=content, headers={"Content-Type": "application/json"}
                )
                assert (answer.status_code, answer.json()["error"]["kind"]) == (413, "too_large")
                content = big if framing == "content-length" else chunks()
        assert wire.http.get("/health").status_code == 200
