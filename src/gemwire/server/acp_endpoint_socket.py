"""The WebSocket side of the ACP endpoint: one text frame is one JSON-RPC message, both
ways (`socket_to_agent`, `agent_to_socket`), and a socket's closing (`Socket`).

The endpoint accepts the socket and starts the agent; these move the messages until either
side ends."""

from __future__ import annotations

import contextlib

import anyio

from gemwire.errors import AgentNotFound
from gemwire.protocol.acp.remote import CONNECTION_ID_HEADER, invalid_request, parse_error, peek
from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES
from gemwire.runners.acp.channel import CLOSE_GRACE, AgentChannel
from gemwire.server.acp_connection import agent_messages, one_line
from gemwire.server.acp_endpoint_asgi import NOT_A_METHOD, NOT_JSON, Receive, Scope, Send, deny
from gemwire.server.acp_idle import Activity
from gemwire.server.acp_roots import Refused, SessionFolders

__all__ = ("Socket", "agent_to_socket", "close_when_asked", "socket_to_agent")

_TOO_BIG = 1009


class Socket:
    """One WebSocket connection: its traffic, its serving (`serve`), and how it is to close
    (`close`)."""

    def __init__(self, activity: Activity) -> None:
        self.activity = activity
        self.closing = anyio.Event()
        self.code = 1000
        self.reason = ""

    async def serve(
        self,
        socket_id: str,
        channel: AgentChannel,
        folders: SessionFolders,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        """Start the agent, accept the socket (``socket_id`` its ``Acp-Connection-Id``) and
        move the messages until either side ends or `close` is called; stop the agent. An
        agent whose command cannot run refuses the socket (404)."""
        async with contextlib.AsyncExitStack() as stack:
            try:
                await stack.enter_async_context(channel)
            except AgentNotFound as exc:
                await deny(scope, send, 404, "not_found", str(exc))
                return
            header = (CONNECTION_ID_HEADER.lower().encode(), socket_id.encode())
            await send({"type": "websocket.accept", "headers": [header]})
            async with anyio.create_task_group() as tg:
                tg.start_soon(agent_to_socket, channel, send, self.activity)
                tg.start_soon(close_when_asked, self, tg.cancel_scope, send)
                await socket_to_agent(channel, receive, send, self.activity, folders)
                tg.cancel_scope.cancel()
            with anyio.CancelScope(shield=True):
                await channel.close(CLOSE_GRACE)

    def close(self, code: int, reason: str) -> None:
        """Close the socket with ``code`` and ``reason``, stopping its agent (the first
        reason given wins)."""
        if not self.closing.is_set():
            self.code, self.reason = code, reason
            self.closing.set()


async def agent_to_socket(channel: AgentChannel, send: Send, activity: Activity) -> None:
    """The agent's messages to the client, a text frame each; the agent's end closes the
    socket (1000 when it exited with 0, else 1011)."""
    try:
        async for message in agent_messages(channel):
            activity.agent_sent(peek(message) if activity.turn_running else None)
            try:
                text = message.decode()
            except UnicodeDecodeError:  # a text frame is UTF-8: the rest as Node reads it
                text = message.decode(errors="replace")
            await send({"type": "websocket.send", "text": text})
        code = channel.exit_code
        reason = "the agent exited" if code is None else f"the agent exited with code {code}"
        await send(
            {"type": "websocket.close", "code": 1000 if not code else 1011, "reason": reason}
        )
    except OSError:
        return  # the client is gone: the other side sees it


async def close_when_asked(socket: Socket, scope: anyio.CancelScope, send: Send) -> None:
    """Once `Socket.close` is called: stop the socket's tasks (``scope``) and close it."""
    await socket.closing.wait()
    scope.cancel()
    with anyio.CancelScope(shield=True), contextlib.suppress(OSError):
        await send({"type": "websocket.close", "code": socket.code, "reason": socket.reason})


async def socket_to_agent(
    channel: AgentChannel,
    receive: Receive,
    send: Send,
    activity: Activity,
    folders: SessionFolders,
) -> None:
    """The client's frames to the agent, each checked first (`peek`, the folders); a
    binary frame ignored, one over the line cap closing the socket with 1009."""
    while True:
        message = await receive()
        if message["type"] == "websocket.disconnect":
            return
        if message["type"] != "websocket.receive":
            continue
        text = message.get("text")
        data: bytes = text.encode() if text is not None else message.get("bytes") or b""
        if len(data) > DEFAULT_MAX_LINE_BYTES:
            reason = "the message is too big"
            await send({"type": "websocket.close", "code": _TOO_BIG, "reason": reason})
            return
        if text is None:  # a binary frame: the RFD has them ignored
            continue
        seen = peek(data) if data.strip() else None
        if seen is None or seen.invalid:
            activity.client_sent(None)
            if seen is not None:
                answer = invalid_request(seen.key, NOT_A_METHOD)
                await send({"type": "websocket.send", "text": answer.decode()})
            elif data.strip():
                await send({"type": "websocket.send", "text": parse_error(NOT_JSON).decode()})
            continue
        checked = folders.check(data)
        if isinstance(checked, Refused):
            activity.client_sent(None)
            if checked.answer is not None:
                await send({"type": "websocket.send", "text": checked.answer.decode()})
            continue
        activity.client_sent(seen)
        await channel.send(one_line(checked) + b"\n")
