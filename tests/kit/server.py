"""The server's app in the test's own event loop: lifespan, HTTP, SSE and WebSocket.

httpx's ASGI transport returns a response only once the app has finished it, so an SSE
stream that follows live is read here by calling the app directly (`Served.sse`); the
WebSocket goes through httpx-ws's ASGI transport. Nothing listens on a port.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, MutableMapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import httpx
import msgspec
from anyio.abc import TaskGroup
from httpx_ws import AsyncWebSocketSession, aconnect_ws
from httpx_ws.transport import ASGIWebSocketTransport
from starlette.applications import Starlette

from gemwire.events import (
    Event,
    MessageDelta,
    SessionStarted,
    TurnCompleted,
    TurnError,
    UserMessage,
)
from gemwire.runners.acp import AcpOptions, AgentChannel, memory_channel_pair
from gemwire.server import ServerConfig, create_app
from gemwire.server.agents import AgentEntry
from gemwire.server.responses import NotFound
from gemwire.server.stream import StreamRun
from gemwire.testing import PromptHandler, ScriptedAgent

TOKEN = "test-token-0123456789"
HOST = "127.0.0.1:8765"
BASE = f"http://{HOST}"


def auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


def make_config(root: str, state_dir: str, **changes: Any) -> ServerConfig:
    fields: dict[str, Any] = {
        "host": "127.0.0.1",
        "port": 8765,
        "token": TOKEN,
        "roots": (root,),
        "state_dir": state_dir,
    }
    return ServerConfig(**{**fields, **changes})


class SseStream:
    """What an SSE response sent so far: its status, headers and parsed messages."""

    def __init__(self) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self.ended = anyio.Event()
        self.raw = b""
        self._changed = anyio.Event()

    def feed(self, message: Mapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.headers = {k.decode(): v.decode() for k, v in message["headers"]}
        else:
            self.raw += message.get("body", b"")
            if not message.get("more_body", False):
                self.ended.set()
        self._changed.set()
        self._changed = anyio.Event()

    def messages(self) -> list[dict[str, str]]:
        """Every complete message: its fields (``id``, ``event``, ``data``; comments as
        ``comment``)."""
        found = []
        for block in self.raw.decode().split("\n\n")[:-1]:
            fields: dict[str, str] = {}
            for line in block.split("\n"):
                name, _, value = line.partition(":")
                fields[name or "comment"] = value.removeprefix(" ")
            found.append(fields)
        return found

    def envelopes(self) -> list[dict[str, Any]]:
        return [
            msgspec.json.decode(m["data"]) for m in self.messages() if m.get("event") == "gemwire"
        ]

    async def wait_for(self, count: int) -> list[dict[str, Any]]:
        """The envelopes once at least ``count`` came (or the stream ended)."""
        while len(self.envelopes()) < count and not self.ended.is_set():
            await self._changed.wait()
        return self.envelopes()


class Served:
    """The app running in this loop; its lifespan ends when the ``async with`` does."""

    def __init__(self, app: Starlette) -> None:
        self.app = app
        self.http = httpx.AsyncClient(
            transport=ASGIWebSocketTransport(app=app), base_url=BASE, headers=auth()
        )

    async def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return await self.http.request(method, path, **kwargs)

    @asynccontextmanager
    async def sse(
        self, path: str, headers: Mapping[str, str] | None = None
    ) -> AsyncIterator[SseStream]:
        """A GET of ``path`` read as it comes; the client goes away on leaving."""
        stream = SseStream()
        gone = anyio.Event()
        query = b""
        if "?" in path:
            path, _, rest = path.partition("?")
            query = rest.encode()
        all_headers = {"host": HOST, **auth(), **(headers or {})}
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "root_path": "",
            "query_string": query,
            "headers": [(k.lower().encode(), v.encode()) for k, v in all_headers.items()],
            "client": ("127.0.0.1", 5000),
            "server": ("127.0.0.1", 8765),
        }
        sent_request = False

        async def receive() -> dict[str, Any]:
            nonlocal sent_request
            if not sent_request:
                sent_request = True
                return {"type": "http.request", "body": b"", "more_body": False}
            await gone.wait()
            return {"type": "http.disconnect"}

        async def send(message: MutableMapping[str, Any]) -> None:
            stream.feed(message)

        async with anyio.create_task_group() as tg:

            async def run() -> None:
                await self.app(scope, receive, send)
                stream.ended.set()

            tg.start_soon(run)
            try:
                yield stream
            finally:
                gone.set()
                with anyio.fail_after(10):
                    await stream.ended.wait()

    @asynccontextmanager
    async def ws(
        self, path: str, headers: Mapping[str, str] | None = None
    ) -> AsyncIterator[AsyncWebSocketSession]:
        socket: AsyncWebSocketSession
        async with aconnect_ws(path, self.http, headers=dict(headers or {})) as socket:
            yield socket


@asynccontextmanager
async def served(app: Starlette) -> AsyncIterator[Served]:
    """``app`` with its lifespan running, and a client for it (with the token)."""
    harness = Served(app)
    async with app.router.lifespan_context(app), harness.http:
        yield harness


class LoadingAgent(ScriptedAgent):
    """A `ScriptedAgent` that can load its sessions and has two modes (`MODES`); a session
    it loads replays ``replay`` first (the user's text, then the agent's), if set."""

    replay: tuple[str, str] | None = None

    async def respond(self, message: dict[str, Any]) -> None:
        method, params = message["method"], message.get("params") or {}
        result: dict[str, Any]
        if method == "initialize":
            info = {"name": self.scenario.agent_info.name, "version": "1.0"}
            result = {
                "protocolVersion": 1,
                "agentInfo": info,
                "agentCapabilities": {"loadSession": True},
            }
        elif method in ("session/new", "session/load"):
            if method == "session/new":
                result = {"sessionId": f"a{id(self) % 10_000}-{self.sessions}"}
                self.sessions += 1
            else:
                if self.replay is not None:
                    asked, answered = self.replay
                    text = {"type": "text", "text": asked}
                    await self.update(params["sessionId"], "user_message_chunk", content=text)
                    await self.say(params["sessionId"], answered)
                result = {}
            result["modes"] = {"currentModeId": "default", "availableModes": MODES}
        elif method == "session/set_mode":
            if params.get("modeId") not in [mode["id"] for mode in MODES]:
                # As real agents do (Antigravity's frames: tests/fixtures/acp/antigravity).
                error = {"code": -32602, "message": f"no mode {params.get('modeId')!r}"}
                await self.send({"id": message["id"], "error": error})
                return
            result = {}
        else:
            await super().respond(message)
            return
        await self.send({"id": message["id"], "result": result})


MODES = [{"id": "default", "name": "Default"}, {"id": "yolo", "name": "YOLO"}]


class ScriptedLauncher:
    """Agents named ``scripted``: a `LoadingAgent` per channel, run in ``tg``."""

    def __init__(
        self, tg: TaskGroup, on_prompt: PromptHandler | None = None, loads: bool = True
    ) -> None:
        self.tg = tg
        self.on_prompt = on_prompt
        self.loads = loads
        self.started: list[ScriptedAgent] = []

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
        client_end, agent_end = memory_channel_pair()
        kind = LoadingAgent if self.loads else ScriptedAgent
        agent = kind(agent_end)
        if self.on_prompt is not None:
            agent.on_prompt = self.on_prompt
        self.started.append(agent)
        self.tg.start_soon(agent.run)
        return client_end


class FakeRun:
    """A ``gemini-stream`` run: session_started, the prompt, an answer, turn_completed;
    the prompt ``hang`` waits for `cancel` first."""

    def __init__(self, prompt: str, session_id: str) -> None:
        self.prompt = prompt
        self.session_id = session_id
        self.cancelled = anyio.Event()

    async def cancel(self, message: str = "the caller stopped the run") -> None:
        self.cancelled.set()

    async def __aiter__(self) -> AsyncIterator[Event]:
        agent, sid = "gemini-cli", self.session_id
        yield SessionStarted(agent=agent, session_id=sid, cwd="/")
        yield UserMessage(agent=agent, session_id=sid, text=self.prompt)
        yield MessageDelta(agent=agent, session_id=sid, text=f"re: {self.prompt}")
        if self.prompt == "hang":
            await self.cancelled.wait()
        stop, error = (
            ("cancelled", TurnError(kind="cancelled", message="stopped"))
            if self.cancelled.is_set()
            else ("end_turn", None)
        )
        yield TurnCompleted(
            agent=agent, session_id=sid, ok=error is None, stop_reason=stop, error=error,
            answer=f"re: {self.prompt}",
        )  # fmt: skip


class FakeStreamLauncher:
    """``gemini-stream`` turns as `FakeRun`s; ``runs`` keeps what each was asked."""

    def __init__(self) -> None:
        self.runs: list[dict[str, Any]] = []

    def check(self) -> None:
        return None

    def run(
        self, prompt: str, cwd: str, *, resume: str | None, permissions: str, model: str | None
    ) -> AbstractAsyncContextManager[StreamRun]:
        self.runs.append(
            {"prompt": prompt, "resume": resume, "permissions": permissions, "model": model}
        )

        @asynccontextmanager
        async def running() -> AsyncIterator[StreamRun]:
            yield FakeRun(prompt, resume or f"g-{len(self.runs)}")

        return running()


@asynccontextmanager
async def scripted_server(
    root: str,
    state_dir: str,
    on_prompt: PromptHandler | None = None,
    *,
    loads: bool = True,
    stream_launcher: FakeStreamLauncher | None = None,
    **changes: Any,
) -> AsyncIterator[tuple[Served, ScriptedLauncher]]:
    """A server of scripted agents (see `ScriptedLauncher`), within 30 s."""
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            launcher = ScriptedLauncher(tg, on_prompt, loads)
            app = create_app(
                make_config(root, state_dir, **changes),
                launcher=launcher,
                stream_launcher=stream_launcher or FakeStreamLauncher(),
            )
            async with served(app) as server:
                yield server, launcher
            tg.cancel_scope.cancel()
