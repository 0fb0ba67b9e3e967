"""WebSocket closes as hypercorn serves them under `gemwire.server.run` (`run_ws`): the
client's close code and reason reach the app as sent, and a message over the cap closes the
socket with 1009 and a reason, the app told at once."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from httpx_ws import AsyncWebSocketSession, WebSocketDisconnect, aconnect_ws
from kit.served import serve_asgi
from kit.waiting import eventually

pytestmark = pytest.mark.anyio

CAP = 1024


class Recorder:
    """An ASGI app that accepts a WebSocket, says ``hello``, echoes text frames, and keeps
    what its ``websocket.disconnect`` said; after it, it sends once more (which must go
    nowhere, without an error)."""

    def __init__(self) -> None:
        self.disconnects: list[tuple[int, str]] = []
        self.received: list[str] = []
        self.finished = False

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            return
        await receive()
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.send", "text": "hello"})
        while (message := await receive())["type"] != "websocket.disconnect":
            self.received.append(message["text"])
            await send({"type": "websocket.send", "text": message["text"]})
        self.disconnects.append((message["code"], message.get("reason", "")))
        await send({"type": "websocket.send", "text": "after the end"})
        self.finished = True


@pytest.mark.parametrize(
    ("code", "reason"), [(4321, "the client is done"), (1009, "")], ids=["any code", "1009"]
)
async def test_a_client_s_close_code_and_reason_reach_the_app_as_sent(
    code: int, reason: str
) -> None:
    app = Recorder()
    with serve_asgi(app) as host, anyio.fail_after(20):
        async with (
            httpx.AsyncClient() as client,
            aconnect_ws(f"ws://{host}/", client, session_class=AsyncWebSocketSession) as ws,
        ):
            assert await ws.receive_text() == "hello"
            await ws.close(code, reason)
        await eventually(lambda: app.finished)
    assert app.disconnects == [(code, reason)]


async def test_a_message_over_the_cap_closes_with_1009_and_tells_the_app_at_once() -> None:
    app = Recorder()
    with serve_asgi(app, max_ws_message_bytes=CAP) as host, anyio.fail_after(20):
        async with (
            httpx.AsyncClient() as client,
            aconnect_ws(f"ws://{host}/", client, session_class=AsyncWebSocketSession) as ws,
        ):
            assert await ws.receive_text() == "hello"
            await ws.send_text("x" * CAP)  # at the cap: passes
            assert await ws.receive_text() == "x" * CAP
            await ws.send_text("y" * (40 * CAP))
            with pytest.raises(WebSocketDisconnect) as caught:
                await ws.receive_text()
            # The app was told when the message went over, not when the client answered.
            await eventually(lambda: app.finished)
        assert (caught.value.code, caught.value.reason) == (1009, "the message is too big")
    assert app.received == ["x" * CAP]
    assert app.disconnects == [(1009, "the message is too big")]
