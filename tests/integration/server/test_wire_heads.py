"""Connections on the server as it ships (`kit.wire`: hypercorn): a head over
`MAX_HEAD_BYTES` is 431 on HTTP/1.1 whether it comes in pieces or in one read, one just under
it served; a connection its client closed is let go at once (hypercorn's own loop kept it
until its keep-alive timeout, `HEAD_TIMEOUT`, counted against `MAX_CONNECTIONS`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kit.waiting import eventually_blocking
from kit.wire import Wire, wire_server

from gemwire.server.config import MAX_HEAD_BYTES


@pytest.fixture(scope="module")
def wire(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Wire]:
    base = tmp_path_factory.mktemp("heads")
    (base / "root").mkdir()
    with wire_server(str(base / "root"), str(base / "state")) as running:
        yield running


def status_of(wire: Wire, filler: int, piece: int | None) -> bytes:
    """The status line answering a GET /health whose head has ``filler`` more bytes, sent
    in pieces of ``piece`` bytes (None: in one write)."""
    head = wire.request_head("GET", "/health").replace(
        b"\r\n\r\n", b"\r\nX-Filler: " + b"a" * filler + b"\r\n\r\n"
    )
    sock = wire.connect()
    try:
        if piece is None:
            sock.sendall(head)
        else:
            for start in range(0, len(head), piece):
                sock.sendall(head[start : start + piece])
        answer = b""
        while b"\r\n" not in answer and (data := sock.recv(65536)):
            answer += data
    finally:
        sock.close()
    return answer.split(b"\r\n", 1)[0]


@pytest.mark.parametrize("piece", [None, 4096])
def test_a_head_over_64_kib_is_431(wire: Wire, piece: int | None) -> None:
    assert status_of(wire, MAX_HEAD_BYTES, piece) == b"HTTP/1.1 431 "


def test_a_head_just_under_64_kib_is_served(wire: Wire) -> None:
    assert status_of(wire, MAX_HEAD_BYTES - 1024, 4096) == b"HTTP/1.1 200 "


def test_connections_their_clients_closed_are_let_go_at_once(wire: Wire) -> None:
    let_go = 3.0  # well under HEAD_TIMEOUT
    eventually_blocking(lambda: not wire.server.writers, timeout=let_go)  # the tests' before
    socks = [wire.connect() for _ in range(5)]
    try:
        for sock in socks:
            sock.sendall(wire.request_head("GET", "/health"))
            assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
        assert len(wire.server.writers) == 5
    finally:
        for sock in socks:
            sock.close()
    eventually_blocking(lambda: not wire.server.writers, timeout=let_go)
