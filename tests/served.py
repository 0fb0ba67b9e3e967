"""An ASGI app served by uvicorn on 127.0.0.1 (a free port) in a thread of its own, and
`ScriptedChannel`: a `gemwire.testing.ScriptedAgent` as an `AgentChannel` an endpoint launches.

uvicorn runs on asyncio in its thread, so the client under test may run on either anyio
backend in the test's thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from typing import Any, Self

import anyio

from gemwire.runners.acp import MemoryChannel, memory_channel_pair
from gemwire.runners.acp.channel import Framing
from gemwire.testing import PromptHandler, ScriptedAgent

WS_MAX_SIZE = 128 * 1024 * 1024
"""Above the endpoint's own cap (64 MiB), so that the endpoint's check is what refuses."""


@contextmanager
def serve_asgi(app: Any) -> Iterator[str]:
    """``app`` served at the yielded ``127.0.0.1:PORT``, stopped on exit."""
    import uvicorn

    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, ws="wsproto", ws_max_size=WS_MAX_SIZE, log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(20)


async def eventually(done: Callable[[], bool]) -> None:
    """Wait until ``done()`` holds: for what the server's thread does (its anyio events
    belong to its loop); fails after 10 seconds."""
    with anyio.fail_after(10):
        while not done():  # noqa: ASYNC110 - state of another thread
            await anyio.sleep(0.01)


class LoadingAgent(ScriptedAgent):
    """A `ScriptedAgent` that also loads sessions: ``session/load`` replays one exchange
    (``earlier`` → ``before``) of the session, then answers."""

    async def respond(self, message: dict[str, Any]) -> None:
        method, params = message["method"], message.get("params") or {}
        if method == "initialize":
            info = {"name": self.scenario.agent_info.name, "version": "1.0"}
            result = {
                "protocolVersion": 1,
                "agentInfo": info,
                "agentCapabilities": {"loadSession": True},
            }
        elif method == "session/load":
            session_id = params["sessionId"]
            text = {"type": "text", "text": "earlier"}
            await self.update(session_id, "user_message_chunk", content=text)
            await self.say(session_id, "before")
            result = {}
        else:
            await super().respond(message)
            return
        await self.send({"id": message["id"], "result": result})


class ScriptedChannel:
    """The channel of a `ScriptedAgent` running while the channel is open (``agents``
    collects each one started, for the test to inspect)."""

    framing: Framing = "messages"

    def __init__(
        self,
        agents: list[ScriptedAgent] | None = None,
        *,
        on_prompt: PromptHandler | None = None,
        agent_type: type[ScriptedAgent] = ScriptedAgent,
    ) -> None:
        self._agents = agents if agents is not None else []
        self._on_prompt = on_prompt
        self._agent_type = agent_type
        self._stack = AsyncExitStack()
        self.closed = threading.Event()
        """Set once the channel closed (in the server's thread: see `eventually`)."""

    stderr_tail = None
    exit_code = None
    close_reason = None

    async def __aenter__(self) -> Self:
        near, far = memory_channel_pair()
        self._near: MemoryChannel = near
        agent = self._agent_type(far, on_prompt=self._on_prompt)
        self._agents.append(agent)
        stack = self._stack
        await stack.enter_async_context(near)
        await stack.enter_async_context(far)
        tg = await stack.enter_async_context(anyio.create_task_group())
        tg.start_soon(agent.run)
        stack.callback(tg.cancel_scope.cancel)
        stack.callback(self.closed.set)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._stack.aclose()

    async def send(self, data: bytes) -> None:
        await self._near.send(data)

    async def receive(self) -> bytes:
        return await self._near.receive()

    async def close(self, grace: float) -> None:
        await self._near.close(grace)


def sdk_echo_app() -> Any:
    """The ACP Python SDK's own ASGI app serving its example echo agent
    (tests/fixtures/acp_sdk/echo_agent.py.txt, the SDK's examples/echo_agent.py)."""
    from acp.http.asgi import create_asgi_app

    source = Path(__file__).parent / "fixtures" / "acp_sdk" / "echo_agent.py.txt"
    namespace: dict[str, Any] = {"__name__": "acp_sdk_echo_agent"}
    exec(compile(source.read_text(), str(source), "exec"), namespace)  # noqa: S102 - the SDK's example
    echo_agent = namespace["EchoAgent"]
    return create_asgi_app(lambda connection: echo_agent())


def endpoint_app(endpoint: Any) -> Any:
    """``endpoint`` mounted at ``/acp/{agent}``, as `gemwire serve` mounts it."""
    from starlette.routing import Route, Router, WebSocketRoute

    routes = [Route("/acp/{agent}", endpoint), WebSocketRoute("/acp/{agent}", endpoint)]
    return Router(routes=routes, lifespan=lambda app: endpoint.running())
