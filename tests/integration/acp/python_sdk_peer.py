"""The ACP Python SDK's own client and server for the transport interop tests, run under
the SDK version being tested (0.12.1 in .venv, 1.0.0rc3 in .venv-acp-rc3):

    python python_sdk_peer.py client URL CWD   the seven steps against an ACP endpoint; one JSON
                                          line a step: {"step": ..., what it saw}
    python python_sdk_peer.py serve            the SDK's ASGI app (WebSocket and Streamable HTTP
                                          at /acp) under uvicorn on 127.0.0.1, serving a
                                          trivial agent; prints {"port": N}, ends with stdin

The agent: "hello" says hello; "permission" asks the client and says the option chosen;
"hang" says "Thinking" and waits for session/cancel; session/load replays one exchange.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from acp import PROTOCOL_VERSION, connect_to_agent
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    AllowedOutcome,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallUpdate,
    UserMessageChunk,
)


def text_block(text: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=text)


def _say(kind: str, text: str) -> Any:
    if kind == "agent":
        return AgentMessageChunk(session_update="agent_message_chunk", content=text_block(text))
    return UserMessageChunk(session_update="user_message_chunk", content=text_block(text))


class Agent:
    """The SDK's ``Agent`` protocol, the methods the seven steps need."""

    sessions = 0

    def __init__(self) -> None:
        self._cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        capabilities = AgentCapabilities(load_session=True)
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION, agent_capabilities=capabilities
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        session_id = f"py{Agent.sessions}"
        Agent.sessions += 1
        return NewSessionResponse(session_id=session_id)

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> LoadSessionResponse:
        await self._conn.session_update(session_id, _say("user", "hello"))
        await self._conn.session_update(session_id, _say("agent", "Hello there."))
        return LoadSessionResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        text = prompt[0].text
        if text == "permission":
            options = [
                PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
                PermissionOption(option_id="no", name="Reject", kind="reject_once"),
            ]
            tool_call = ToolCallUpdate(tool_call_id="t1", title="write a", kind="edit")
            answer = await self._conn.request_permission(
                options=options, session_id=session_id, tool_call=tool_call
            )
            await self._conn.session_update(session_id, _say("agent", answer.outcome.option_id))
        elif text == "hang":
            self._cancelled[session_id] = cancelled = asyncio.Event()
            await self._conn.session_update(session_id, _say("agent", "Thinking"))
            await cancelled.wait()
            return PromptResponse(stop_reason="cancelled")
        else:
            await self._conn.session_update(session_id, _say("agent", "Hello there."))
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self._cancelled.pop(session_id, asyncio.Event()).set()


class Client:
    """The SDK's ``Client`` protocol: keeps what the agent streamed and asked."""

    def __init__(self) -> None:
        self.updates: list[list[Any]] = []
        self.asked: list[str] = []
        self.first = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        content = getattr(update, "content", None)
        self.updates.append([update.session_update, getattr(content, "text", None)])
        self.first.set()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.asked.append(tool_call.tool_call_id)
        allow = next(o for o in options if o.kind == "allow_once")
        outcome = AllowedOutcome(option_id=allow.option_id, outcome="selected")
        return RequestPermissionResponse(outcome=outcome)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(name)


def _sdk(value: object) -> Any:
    """``value`` as the SDK takes it: its protocols differ between 0.12 and 1.0."""
    return value


async def _transport(url: str) -> Any:
    if url.startswith("ws"):
        from acp.ws import create_websocket_stream

        return await create_websocket_stream(url)
    from importlib.metadata import version

    from acp.http import create_http_stream

    if version("agent-client-protocol").startswith("0."):  # its default client wants h2
        import httpx

        return create_http_stream(url, client=httpx.AsyncClient(timeout=None))
    return create_http_stream(url)


async def client(url: str, cwd: str) -> None:
    seen = Client()

    async def step(name: str, run: Any) -> Any:
        seen.updates, seen.asked = [], []
        seen.first = asyncio.Event()
        fields = await asyncio.wait_for(run(), 60)
        line = {"step": name, **fields, "updates": seen.updates, "asked": seen.asked}
        print(json.dumps(line), flush=True)

    transport = await _transport(url)
    conn = connect_to_agent(_sdk(seen), transport)
    state: dict[str, Any] = {}

    async def initialize() -> dict[str, Any]:
        init = await conn.initialize(protocol_version=1)
        return {
            "protocolVersion": init.protocol_version,
            "loadSession": _sdk(init.agent_capabilities).load_session,
        }

    async def new() -> dict[str, Any]:
        state["id"] = (await conn.new_session(cwd=cwd, mcp_servers=[])).session_id
        return {"sessionId": state["id"]}

    def prompt(on: Any, text: str) -> Any:
        async def run() -> dict[str, Any]:
            answer = await on.prompt(session_id=state["id"], prompt=[text_block(text)])
            return {"stopReason": answer.stop_reason}

        return run

    async def cancel() -> dict[str, Any]:
        answer = asyncio.ensure_future(
            conn.prompt(session_id=state["id"], prompt=[text_block("hang")])
        )
        await seen.first.wait()
        await conn.cancel(session_id=state["id"])
        return {"stopReason": (await answer).stop_reason}

    await step("initialize", initialize)
    await step("session/new", new)
    await step("prompt", prompt(conn, "hello"))
    await step("permission", prompt(conn, "permission"))
    await step("cancel", cancel)
    await conn.close()
    await transport.close()
    transport = await _transport(url)
    second = connect_to_agent(_sdk(seen), transport)

    async def load() -> dict[str, Any]:
        await second.initialize(protocol_version=1)
        await second.load_session(cwd=cwd, session_id=state["id"], mcp_servers=[])
        return {}

    await step("session/load", load)
    await step("prompt after load", prompt(second, "hello"))
    await second.close()
    await transport.close()


def serve() -> None:
    import threading

    import uvicorn
    from acp.http.asgi import create_asgi_app

    app = create_asgi_app(_sdk(lambda connection: Agent()))
    config = uvicorn.Config(app, host="127.0.0.1", port=0, ws="websockets", log_level="warning")
    server = uvicorn.Server(config)

    def announce() -> None:
        while not server.started:
            threading.Event().wait(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        print(json.dumps({"port": port}), flush=True)
        sys.stdin.read()
        server.should_exit = True

    threading.Thread(target=announce, daemon=True).start()
    server.run()


if __name__ == "__main__":
    if sys.argv[1] == "client":
        asyncio.run(client(sys.argv[2], sys.argv[3]))
    else:
        serve()
