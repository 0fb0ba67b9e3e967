"""The ASGI of the ACP endpoint, by hand (it is a pure ASGI app): the callables' types, a
request's headers and body, the JSON answers and errors, a WebSocket refused before its
accept."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio
import msgspec

from gemwire.protocol.sse import KEEP_ALIVE, encode_event

__all__ = (
    "NOT_A_METHOD",
    "NOT_JSON",
    "Receive",
    "Scope",
    "Send",
    "body_of",
    "deny",
    "error",
    "event_stream",
    "headers_of",
    "respond",
)

KEEP_ALIVE_INTERVAL = 15.0
"""Seconds of silence on an SSE stream before a keep-alive comment."""
NOT_JSON = "the message is not a JSON-RPC message (a JSON object, UTF-8)"
NOT_A_METHOD = "method must be a string"
"""Why a message is answered -32700 and -32600 before it reaches the agent."""

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def headers_of(scope: Scope) -> dict[str, str]:
    """A request's headers by their lower-case names."""
    return {
        key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]
    }


async def body_of(receive: Receive, limit: int) -> bytes | None:
    """The request's body; ``None`` once it passes ``limit`` (the rest is not kept)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def respond(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    all_headers = [(b"content-type", b"application/json"), *(headers or [])]
    await send({"type": "http.response.start", "status": status, "headers": all_headers})
    await send({"type": "http.response.body", "body": body})


async def error(send: Send, status: int, kind: str, message: str) -> None:
    """The server's error document (``{"error": {"kind", "message"}}``) with ``status``."""
    body = msgspec.json.encode({"error": {"kind": kind, "message": message}})
    await respond(send, status, body)


async def deny(scope: Scope, send: Send, status: int, kind: str, message: str) -> None:
    """Refuse a WebSocket before accepting it: with an HTTP answer where the server can."""
    if "websocket.http.response" in scope.get("extensions", {}):
        body = msgspec.json.encode({"error": {"kind": kind, "message": message}})
        start = {
            "type": "websocket.http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json")],
        }
        await send(start)
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008, "reason": message[:120]})


async def event_stream(
    messages: Callable[[], Awaitable[bytes | None]], receive: Receive, send: Send
) -> bool:
    """Answer with an SSE stream of ``messages`` (an event each, until ``None``; a
    keep-alive comment after `KEEP_ALIVE_INTERVAL` of silence); whether the client went
    away first."""
    start = {
        "type": "http.response.start",
        "status": 200,
        "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")],
    }
    gone = False
    try:
        await send(start)
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                nonlocal gone
                while (await receive())["type"] != "http.disconnect":
                    pass
                gone = True
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            while True:
                message: bytes | None = b""
                with anyio.move_on_after(KEEP_ALIVE_INTERVAL):
                    message = await messages()
                if message is None:
                    break
                body = encode_event(message) if message else KEEP_ALIVE
                await send({"type": "http.response.body", "body": body, "more_body": True})
            tg.cancel_scope.cancel()
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    except OSError:  # the client went while we wrote
        gone = True
    return gone
