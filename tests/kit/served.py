"""An ASGI app served on 127.0.0.1 (a free port) as ``gemwire serve`` serves it, and
`ScriptedChannel`: a `gemwire.testing.ScriptedAgent` as an `AgentChannel` an endpoint launches.

`serve_asgi` runs the app on `gemwire.server.run.Server` (hypercorn, with the limits and the
shutdown order ``gemwire serve`` has) in an anyio loop (asyncio) of a thread of its own, so
the client under test may run on either anyio backend in the test's thread, and the interop
tests drive the server as it ships.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from typing import Any, Self

import anyio

from gemwire.runners.acp import MemoryChannel, memory_channel_pair
from gemwire.runners.acp.channel import Framing
from gemwire.server.config import ServerConfig
from gemwire.server.run import Server, bind
from gemwire.testing import PromptHandler, ScriptedAgent


@contextmanager
def serve_asgi(app: Any, drain: Any = None, **changes: Any) -> Iterator[str]:
    """``app`` served at the yielded ``127.0.0.1:PORT``, stopped on exit as on SIGTERM
    (``drain``, if given, is what tells the app: an `AcpEndpoint`'s ``drain``);
    ``changes`` are `ServerConfig` fields hypercorn's configuration takes
    (``max_ws_message_bytes``, ``ssl_certfile``, ...)."""
    sock = bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    config = ServerConfig(
        host="127.0.0.1", port=port, token="-", roots=(), state_dir="-", **changes
    )
    server = Server(app, config, drain=drain or _nothing)
    stopping = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            anyio.run(server.serve, sock, lambda: anyio.to_thread.run_sync(stopping.wait))
        except BaseException as exc:  # noqa: BLE001 - raised in the test's thread
            failure.append(exc)

    thread = threading.Thread(target=run, name="test-server", daemon=True)
    thread.start()  # the socket listens: a client may connect at once
    try:
        yield f"127.0.0.1:{port}"
    finally:
        stopping.set()
        thread.join(120)
        sock.close()
    assert not thread.is_alive(), "the server did not stop"
    if failure:
        raise failure[0]


async def _nothing() -> None:
    pass


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
        """Set once the channel closed (in the server's thread: see `kit.waiting`)."""

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

    source = Path(__file__).parents[1] / "fixtures" / "acp_sdk" / "echo_agent.py.txt"
    namespace: dict[str, Any] = {"__name__": "acp_sdk_echo_agent"}
    exec(compile(source.read_text(), str(source), "exec"), namespace)  # noqa: S102 - the SDK's example
    echo_agent = namespace["EchoAgent"]
    return create_asgi_app(lambda connection: echo_agent())


def endpoint_app(endpoint: Any) -> Any:
    """``endpoint`` mounted at ``/acp/{agent}``, as `gemwire serve` mounts it."""
    from starlette.routing import Route, Router, WebSocketRoute

    routes = [Route("/acp/{agent}", endpoint), WebSocketRoute("/acp/{agent}", endpoint)]
    return Router(routes=routes, lifespan=lambda app: endpoint.running())
