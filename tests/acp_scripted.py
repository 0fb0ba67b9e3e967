"""A scripted ACP agent in this process, on the agent end of `memory_channel_pair`.

It answers ``initialize`` (with the ``capabilities`` it is given) and ``session/new``
itself, any method of ``methods`` with what that returns (or the `ScriptedError` it
raises), and hands each ``session/prompt`` to the test's ``on_prompt`` (in a task of its own, so it can ask the client things and see a
``session/cancel`` meanwhile); what ``on_prompt`` returns is the stop reason. Nothing is
started but tasks: the client under test runs exactly as against a process.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio

from gemwire.runners.acp import AcpClient, AcpOptions, MemoryChannel, memory_channel_pair

Prompt = Callable[["ScriptedAgent", str, dict[str, Any]], Awaitable[str]]
Method = Callable[["ScriptedAgent", dict[str, Any]], Awaitable[dict[str, Any]]]


class ScriptedError(Exception):
    """Raised by a `Method` or ``on_prompt``: the agent answers with this JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


async def _end_turn(agent: ScriptedAgent, session_id: str, params: dict[str, Any]) -> str:
    return "end_turn"


class ScriptedAgent:
    """See the module docstring; ``name`` is its ``agentInfo.name``."""

    def __init__(
        self,
        channel: MemoryChannel,
        *,
        name: str = "scripted",
        on_prompt: Prompt = _end_turn,
        on_new_session: Callable[[ScriptedAgent, int], Awaitable[None]] | None = None,
        capabilities: Mapping[str, Any] | None = None,
        methods: Mapping[str, Method] | None = None,
    ) -> None:
        self.channel = channel
        self.capabilities = dict(capabilities or {"loadSession": False})
        self.methods = dict(methods or {})
        self.name = name
        self.on_prompt = on_prompt
        self.on_new_session = on_new_session
        self.received: list[dict[str, Any]] = []
        self.cancelled = anyio.Event()
        self.request_cancelled = anyio.Event()
        """Set on the first ``$/cancel_request``."""
        self.sessions = 0
        self._next_id = 0
        self._waiting: dict[int, anyio.Event] = {}
        self._answers: dict[int, dict[str, Any]] = {}

    async def send(self, message: dict[str, Any]) -> None:
        await self.channel.send(json.dumps({"jsonrpc": "2.0", **message}).encode())

    async def update(self, session_id: str, kind: str, **fields: Any) -> None:
        update = {"sessionUpdate": kind, **fields}
        params = {"sessionId": session_id, "update": update}
        await self.send({"method": "session/update", "params": params})

    async def say(self, session_id: str, text: str) -> None:
        await self.update(session_id, "agent_message_chunk", content={"type": "text", "text": text})

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Ask the client; its whole answer (``result`` or ``error``)."""
        request_id = self._next_id
        self._next_id += 1
        self._waiting[request_id] = done = anyio.Event()
        await self.send({"id": request_id, "method": method, "params": params})
        await done.wait()
        return self._answers.pop(request_id)

    async def run(self) -> None:
        async with anyio.create_task_group() as tg:
            while data := await self.channel.receive():
                message = json.loads(data)
                self.received.append(message)
                if "method" not in message:
                    self._answers[message["id"]] = message
                    self._waiting.pop(message["id"]).set()
                elif message["method"] == "session/cancel":
                    self.cancelled.set()
                elif message["method"] == "$/cancel_request":
                    self.request_cancelled.set()
                elif "id" in message:
                    tg.start_soon(self._answer, message)
            tg.cancel_scope.cancel()
        await self.channel.close(0)

    async def _answer(self, message: dict[str, Any]) -> None:
        try:
            await self._answer_or_raise(message)
        except ScriptedError as exc:
            error = {"code": exc.code, "message": str(exc)}
            await self.send({"id": message["id"], "error": error})

    async def _answer_or_raise(self, message: dict[str, Any]) -> None:
        method, params = message["method"], message.get("params") or {}
        result: dict[str, Any]
        if method == "initialize":
            info = {"name": self.name, "version": "1.0"}
            capabilities = self.capabilities
            result = {"protocolVersion": 1, "agentInfo": info, "agentCapabilities": capabilities}
        elif method == "session/new":
            number = self.sessions
            self.sessions += 1
            if self.on_new_session is not None:
                await self.on_new_session(self, number)
            result = {"sessionId": f"s{number}"}
        elif method == "session/prompt":
            stop = await self.on_prompt(self, params["sessionId"], params)
            result = {"stopReason": stop}
        elif method in self.methods:
            result = await self.methods[method](self, params)
        else:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            await self.send({"id": message["id"], "error": error})
            return
        await self.send({"id": message["id"], "result": result})


@asynccontextmanager
async def scripted_client(
    options: AcpOptions | None = None,
    *,
    name: str = "scripted",
    on_prompt: Prompt = _end_turn,
    on_new_session: Callable[[ScriptedAgent, int], Awaitable[None]] | None = None,
    capabilities: Mapping[str, Any] | None = None,
    methods: Mapping[str, Method] | None = None,
    **client_args: Any,
) -> AsyncIterator[tuple[AcpClient, ScriptedAgent]]:
    """An `AcpClient` on a `ScriptedAgent`, both running, within 10 s."""
    client_end, agent_end = memory_channel_pair()
    agent = ScriptedAgent(
        agent_end,
        name=name,
        on_prompt=on_prompt,
        on_new_session=on_new_session,
        capabilities=capabilities,
        methods=methods,
    )
    with anyio.fail_after(10):
        async with agent_end, client_end, anyio.create_task_group() as tg:
            tg.start_soon(agent.run)
            async with AcpClient(options or AcpOptions(), channel=client_end, **client_args) as c:
                yield c, agent
            tg.cancel_scope.cancel()
