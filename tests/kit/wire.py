"""The whole server at the wire: `gemwire.server.run.Server` (hypercorn with the limits and
the shutdown order ``gemwire serve`` has) on 127.0.0.1, in an anyio loop (asyncio) of a thread
of its own, its agents
`gemwire.testing.ScriptedAgent`s (`kit.served.ScriptedChannel`) and its ``gemini-stream`` runs `FakeRun`s.

The test talks to it as any client does (httpx, raw sockets), from its own thread; what the
server's thread changes is polled (`eventually_blocking`), never waited for by a guess.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import httpx
from starlette.applications import Starlette

from gemwire.runners.acp import AcpOptions, AgentChannel
from gemwire.server import create_app
from gemwire.server.agents import AgentEntry
from gemwire.server.responses import NotFound
from gemwire.server.run import Server, bind
from gemwire.server.state import AppState
from gemwire.testing import PromptHandler
from kit.served import ScriptedChannel
from kit.server import FakeStreamLauncher, auth, make_config

__all__ = ("ThreadLauncher", "Wire", "wire_server")


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


class Wire:
    """A running server: its address, app, `Server` and a client with the token."""

    def __init__(self, app: Starlette, server: Server, port: int, thread: threading.Thread) -> None:
        self.app = app
        self.server = server
        self.port = port
        self.stopping = threading.Event()
        self._thread = thread
        self.base = f"http://127.0.0.1:{self.port}"
        self.http = httpx.Client(base_url=self.base, headers=auth(), timeout=30)

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
        """Bytes each open connection holds waiting to be sent (their transports')."""
        return [w.transport.get_write_buffer_size() for w in self.server.writers]

    def stop(self) -> float:
        """Shut down as SIGTERM does (`stopping`), wait for it; the seconds it took."""
        started = time.monotonic()
        self.stopping.set()
        self._thread.join(120)
        assert not self._thread.is_alive(), "the server did not stop"
        return time.monotonic() - started


@contextmanager
def wire_server(
    root: str, state_dir: str, launcher: ThreadLauncher | None = None, **changes: Any
) -> Iterator[Wire]:
    """The server of `make_config` ``root``, ``state_dir`` and ``changes``, on a free port."""
    sock = bind("127.0.0.1", 0)
    config = make_config(root, state_dir, port=sock.getsockname()[1], **changes)
    app = create_app(
        config, launcher=launcher or ThreadLauncher(), stream_launcher=FakeStreamLauncher()
    )
    server = Server(app, config)
    failure: list[BaseException] = []

    async def main() -> None:
        await server.serve(sock, lambda: anyio.to_thread.run_sync(wire.stopping.wait))

    def run() -> None:
        try:
            anyio.run(main)
        except BaseException as exc:  # noqa: BLE001 - raised in the test's thread
            failure.append(exc)

    thread = threading.Thread(target=run, name="test-server", daemon=True)
    wire = Wire(app, server, sock.getsockname()[1], thread)
    thread.start()  # the socket listens: a client may connect at once
    try:
        with wire.http:
            yield wire
    finally:
        if thread.is_alive():
            wire.stop()
        sock.close()
    if failure:
        raise failure[0]
