"""The real server app on a real port, for the browser (`kit.threaded_server`).

`live_server` binds 127.0.0.1 port 0 and runs `create_app` on uvicorn (wsproto, as
``gemwire serve`` does) in an anyio loop of its own thread. ``launcher`` gets that loop's
task group, so a test's agents (e.g. `ScriptedAgent`s on memory channels) run in the
server's loop (`ScriptedAgents`). The browser logs in with `LiveServer.log_in`.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn
from anyio.abc import TaskGroup
from playwright.sync_api import Page

from gemwire.runners.acp import AcpOptions, AgentChannel, memory_channel_pair
from gemwire.server import ServerConfig, create_app
from gemwire.server.agents import AgentEntry, AgentLauncher
from gemwire.server.responses import NotFound
from gemwire.server.run import bind
from gemwire.server.security import session_cookie
from gemwire.testing import PromptHandler, ScriptedAgent
from kit.threaded_server import serve_in_thread

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
        name, value = session_cookie(self.config)
        page.context.add_cookies(
            [
                {
                    "name": name,
                    "value": value,
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

    def build(tg: TaskGroup) -> uvicorn.Server:
        app = create_app(config, launcher=launcher(tg) if launcher else None)
        return uvicorn.Server(
            uvicorn.Config(app, ws="wsproto", log_level="warning", timeout_graceful_shutdown=2)
        )

    with serve_in_thread(build, sock):
        yield LiveServer(config)


MODES = [{"id": "default", "name": "Default"}, {"id": "plan", "name": "Plan only"}]
MODELS = [{"modelId": "fast", "name": "Fast"}, {"modelId": "deep", "name": "Deep"}]
EFFORT = {
    "id": "effort",
    "name": "Effort",
    "type": "select",
    "currentValue": "low",
    "options": [{"value": "low", "name": "Low"}, {"value": "high", "name": "High"}],
}


class WebAgent(ScriptedAgent):
    """A `ScriptedAgent` with two modes, two models and an ``effort`` config option
    (``session/new`` announces them, ``session/set_mode``, ``session/set_model`` and
    ``session/set_config_option`` set them) whose prompts the test's ``on_prompt`` answers; ``cwd`` is its session's."""

    cwd = ""

    async def respond(self, message: dict[str, Any]) -> None:
        method = message["method"]
        if method == "session/new":
            self.cwd = message["params"]["cwd"]
            number = self.sessions
            self.sessions += 1
            modes = {"currentModeId": "default", "availableModes": MODES}
            result = {
                "sessionId": f"agent-{number}",
                "modes": modes,
                "models": {"currentModelId": "fast", "availableModels": MODELS},
                "configOptions": [EFFORT],
            }
        elif method in ("session/set_mode", "session/set_model"):
            result = {}
        elif method == "session/set_config_option":
            value = message["params"]["value"]
            result = {"configOptions": [{**EFFORT, "currentValue": value}]}
        else:
            await super().respond(message)
            return
        await self.send({"id": message["id"], "result": result})


class ScriptedAgents:
    """An `AgentLauncher` of one agent, ``scripted`` (titled ``title``), a `WebAgent` per
    session run in the server's task group; ``absent`` is listed but not available."""

    def __init__(self, tg: TaskGroup, on_prompt: PromptHandler, *, title: str = "Scripted") -> None:
        self.tg = tg
        self.on_prompt = on_prompt
        self.title = title
        self.started: list[WebAgent] = []

    def agents(self) -> list[AgentEntry]:
        return [
            AgentEntry(
                name="scripted", title=self.title, transport="acp", available=True, command=[]
            ),
            AgentEntry(
                name="absent",
                title="Absent",
                transport="acp",
                available=False,
                command=[],
                detail="not installed",
            ),
        ]

    def options(self, name: str, cwd: str) -> AcpOptions:
        if name != "scripted":
            raise NotFound(f"unknown agent {name!r}; known: scripted")
        return AcpOptions(cwd=cwd)

    def channel(self, options: AcpOptions) -> AgentChannel:
        client_end, agent_end = memory_channel_pair()
        agent = WebAgent(agent_end, on_prompt=self.on_prompt)
        self.started.append(agent)
        self.tg.start_soon(agent.run)
        return client_end


class CuttableProxy:
    """A TCP proxy on a port of its own, in front of ``target`` (set once the server runs),
    whose connections `cut` drops at once: the network lost, as the browser sees it."""

    def __init__(self) -> None:
        self.target = ("127.0.0.1", 0)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, name="proxy", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:  # closed
                return
            upstream = socket.create_connection(self.target)
            with self._lock:
                self._open += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        with self._lock:
            dropped, self._open = self._open, []
        for end in dropped:
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()

    def close(self) -> None:
        self.listener.close()
        self.cut()
