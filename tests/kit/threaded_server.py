"""The one way tests run a server on a real port: uvicorn in an anyio loop (asyncio) of a
thread of its own, on a socket bound to 127.0.0.1 beforehand (so the port is known first).

``build`` makes the uvicorn server inside that loop, given the loop's task group, so an
app's agents (e.g. `ScriptedAgent`s on memory channels) can run in the server's loop. The
test talks to it as any client does, from its own thread and on either anyio backend; what
the server's thread changes is polled (`kit.waiting`), never waited for by a guess.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import anyio
import uvicorn
from anyio.abc import TaskGroup

from gemwire.server.run import bind

__all__ = ("Running", "serve_in_thread")


class Running:
    """A server running in its thread: its uvicorn ``server`` and ``port``."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.server: uvicorn.Server | None = None
        self.thread: threading.Thread | None = None
        self._stop = threading.Event()

    def stop(self) -> float:
        """Shut it down as SIGTERM does (uvicorn's ``should_exit``); the seconds it took."""
        started = time.monotonic()
        self._stop.set()
        assert self.thread is not None
        self.thread.join(120)
        assert not self.thread.is_alive(), "the server did not stop"
        return time.monotonic() - started


@contextmanager
def serve_in_thread(
    build: Callable[[TaskGroup], uvicorn.Server], sock: socket.socket | None = None
) -> Iterator[Running]:
    """The server ``build`` makes, serving ``sock`` (default: a free port of 127.0.0.1)
    until the ``with`` ends; a failure in its thread is raised in the test's."""
    sock = sock or bind("127.0.0.1", 0)
    running = Running(sock.getsockname()[1])
    started = threading.Event()
    failure: list[BaseException] = []

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            server = running.server = build(tg)

            async def serve() -> None:
                await server.serve(sockets=[sock])
                tg.cancel_scope.cancel()

            tg.start_soon(serve)
            while not server.started:
                if server.should_exit:
                    return  # it failed to start: its error is in the log
                await anyio.sleep(0.01)
            started.set()
            await anyio.to_thread.run_sync(running._stop.wait)
            server.should_exit = True

    def run() -> None:
        try:
            anyio.run(main)
        except BaseException as exc:  # noqa: BLE001 - raised in the test's thread
            failure.append(exc)
        finally:
            started.set()

    running.thread = threading.Thread(target=run, name="test-server", daemon=True)
    running.thread.start()
    try:
        started.wait(60)
        if failure:
            raise failure[0]
        assert running.server is not None
        assert running.server.started, "the server did not start"
        yield running
    finally:
        if running.thread.is_alive():
            running.stop()
        sock.close()
    if failure:
        raise failure[0]
