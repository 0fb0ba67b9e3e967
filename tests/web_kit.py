"""The real server app on a real port, for the browser: uvicorn in a thread of its own.

`live_server` binds 127.0.0.1 port 0 and runs `create_app` on uvicorn (wsproto, as
``gemwire serve`` does) in an anyio loop of its own thread. ``launcher`` gets that loop's
task group, so a test's agents (e.g. `ScriptedAgent`s on memory channels) run in the
server's loop. The browser logs in with `LiveServer.login_url`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import uvicorn
from anyio.abc import TaskGroup
from playwright.sync_api import Page

from gemwire.server import ServerConfig, create_app
from gemwire.server.agents import AgentLauncher
from gemwire.server.run import bind
from gemwire.server.security import COOKIE

TOKEN = "web-test-token-0123456789"


@dataclass(frozen=True)
class LiveServer:
    config: ServerConfig

    @property
    def origin(self) -> str:
        return self.config.url

    @property
    def login_url(self) -> str:
        return f"{self.origin}/?token={TOKEN}"

    def log_in(self, page: Page) -> None:
        """The cookie the ``/?token=`` login sets, without loading the page."""
        page.context.add_cookies(
            [
                {
                    "name": COOKIE,
                    "value": TOKEN,
                    "url": self.origin,
                    "httpOnly": True,
                    "sameSite": "Strict",
                }
            ]
        )

    def same_origin(self, url: str) -> bool:
        """Whether the page may request ``url`` (its own server, nothing else)."""
        return url == self.origin or url.startswith(self.origin + "/")


@contextmanager
def live_server(
    root: str,
    state_dir: str,
    launcher: Callable[[TaskGroup], AgentLauncher] | None = None,
    **changes: Any,
) -> Iterator[LiveServer]:
    """The app on a free port until the ``with`` ends (then every agent is stopped);
    ``changes`` are more `ServerConfig` fields (``sessions_home``, ...)."""
    sock = bind("127.0.0.1", 0)
    config = ServerConfig(
        host="127.0.0.1",
        port=sock.getsockname()[1],
        token=TOKEN,
        roots=(root,),
        state_dir=state_dir,
        **changes,
    )
    started = threading.Event()
    stop = threading.Event()
    failure: list[BaseException] = []

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            app = create_app(config, launcher=launcher(tg) if launcher else None)
            server = uvicorn.Server(
                uvicorn.Config(app, ws="wsproto", log_level="warning", timeout_graceful_shutdown=2)
            )

            async def serve() -> None:
                await server.serve(sockets=[sock])
                tg.cancel_scope.cancel()

            tg.start_soon(serve)
            while not server.started:  # noqa: ASYNC110 - uvicorn has a flag, no event
                await anyio.sleep(0.01)
            started.set()
            await anyio.to_thread.run_sync(stop.wait)
            server.should_exit = True

    def run() -> None:
        try:
            anyio.run(main)
        except BaseException as exc:  # noqa: BLE001 - reported in the test's thread
            failure.append(exc)
        finally:
            started.set()

    thread = threading.Thread(target=run, name="live-server", daemon=True)
    thread.start()
    started.wait(30)
    if failure:
        raise failure[0]
    try:
        yield LiveServer(config)
    finally:
        stop.set()
        thread.join(30)
        sock.close()
        assert not thread.is_alive(), "the server did not stop"
        if failure:
            raise failure[0]
