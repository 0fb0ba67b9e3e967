"""The whole server at the wire: `gemwire.server.run.server_for` (uvicorn with the limits and
the shutdown order ``gemwire serve`` has) on 127.0.0.1, in a thread of its own, its agents
`gemwire.testing.ScriptedAgent`s (served.py's `ScriptedChannel`) and its ``gemini-stream`` runs `FakeRun`s.

The test talks to it as any client does (httpx, raw sockets), from its own thread; what the
server's thread changes is polled (`until`), never waited for by a guess.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import uvicorn
from served import ScriptedChannel
from server_kit import FakeStreamLauncher, auth, make_config
from starlette.applications import Starlette

from gemwire.runners.acp import AcpOptions, AgentChannel
from gemwire.server import create_app
from gemwire.server.agents import AgentEntry
from gemwire.server.responses import NotFound
from gemwire.server.run import bind, server_for
from gemwire.server.state import AppState
from gemwire.testing import PromptHandler

__all__ = ("ThreadLauncher", "Wire", "until", "wire_server")


class ThreadLauncher:
    """Agents named ``scripted``: a `ScriptedChannel` each, answering prompts with
    ``on_prompt``."""

    def __init__(self, on_prompt: PromptHandler | None = None) -> None:
        self.on_prompt = on_prompt
        self.channels: list[ScriptedChannel] = []

    def agents(self) -> list[AgentEntry]:
        return [
            AgentEntry(
                name="scripted", title="Scripted", transport="acp", available=True, command=[]
            )
        ]

    def options(self, name: str, cwd: str) -> AcpOptions:
        if name != "scripted":
            raise NotFound(f"unknown agent {name!r}; known: scripted")
        return AcpOptions(cwd=cwd)

    def channel(self, options: AcpOptions) -> AgentChannel:
        channel = ScriptedChannel(on_prompt=self.on_prompt)
        self.channels.append(channel)
        return channel


def until(done: Callable[[], bool], timeout: float = 20) -> None:
    """Wait until ``done()`` holds (what the server's thread does); fails after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


class Wire:
    """A running server: its address, app, uvicorn server and a client with the token."""

    def __init__(self, app: Starlette, server: uvicorn.Server, port: int) -> None:
        self.app = app
        self.server = server
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.http = httpx.Client(base_url=self.base, headers=auth(), timeout=30)
        self.thread: threading.Thread | None = None

    @property
    def state(self) -> AppState:
        state = self.app.state.gemwire
        assert isinstance(state, AppState)
        return state

    def connect(self, rcvbuf: int | None = None) -> socket.socket:
        """A raw connection (with a receive buffer of ``rcvbuf`` bytes, set before it
        connects, so the window stays that small)."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.settimeout(30)
        try:
            sock.connect(("127.0.0.1", self.port))
        except OSError:
            sock.close()
            raise
        return sock

    def request_head(self, method: str, path: str) -> bytes:
        """A request's head with the token, as a raw client sends it."""
        return (
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
            f"Authorization: {auth()['Authorization']}\r\n\r\n"
        ).encode()

    def write_buffers(self) -> list[int]:
        """Bytes each open connection holds waiting to be sent (uvicorn's transports)."""
        connections: set[Any] = self.server.server_state.connections
        return [c.transport.get_write_buffer_size() for c in list(connections)]

    def stop(self) -> float:
        """Shut down as SIGTERM does; the seconds it took."""
        started = time.monotonic()
        self.server.should_exit = True
        assert self.thread is not None
        self.thread.join(120)
        assert not self.thread.is_alive()
        return time.monotonic() - started


@contextmanager
def wire_server(
    root: str, state_dir: str, launcher: ThreadLauncher | None = None, **changes: Any
) -> Iterator[Wire]:
    """The server of `make_config` ``root``, ``state_dir`` and ``changes``, on a free port."""
    sock = bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    config = make_config(root, state_dir, port=port, **changes)
    app = create_app(
        config, launcher=launcher or ThreadLauncher(), stream_launcher=FakeStreamLauncher()
    )
    server = server_for(app, config)
    wire = Wire(app, server, port)
    wire.thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    wire.thread.start()
    try:
        until(lambda: server.started or not wire.thread or not wire.thread.is_alive())
        assert server.started, "the server did not start"
        yield wire
    finally:
        wire.http.close()
        if wire.thread.is_alive():
            wire.stop()
        sock.close()
