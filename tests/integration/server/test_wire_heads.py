"""A head over `MAX_HEAD_BYTES` on the server as it ships (`kit.wire`: hypercorn): 431 on
HTTP/1.1 whether it comes in pieces or in one read, and one just under it served."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
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
