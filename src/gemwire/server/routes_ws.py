"""A session's WebSocket, ``/v1/sessions/{id}/ws``: its envelopes out (one a text frame,
from ``?after=N``), ops in (``prompt``, ``permission``, ``cancel``), each answered with a
``reply``. An op over the HTTP body limit is refused as the body would be; a client that
takes no frame for `SEND_TIMEOUT` is left (it resumes with ``?after=``)."""

from __future__ import annotations

import contextlib

import anyio
import msgspec
from starlette.routing import BaseRoute, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from gemwire.protocol._undecodable import UNDECODABLE, why_undecodable
from gemwire.serve_api import CancelOp, ErrorDetail, PermissionOp, PromptOp, WsOp, WsReply
from gemwire.server.envelopes import after_seq
from gemwire.server.responses import ApiError, lone_surrogates
from gemwire.server.routes_sessions import SEND_TIMEOUT, manager_of, prompt_blocks, session_of
from gemwire.server.state import app_state

__all__ = ("ROUTES",)

WS_GOING_AWAY = 1001
WS_NORMAL = 1000
_BINARY = "ops are JSON in text frames: a binary frame was not read"


class _Tagged(msgspec.Struct):
    op: object = None


def _refused(raw: str, exc: Exception) -> str:
    """Why a frame is no op: an op the server does not know named, else msgspec's why."""
    with contextlib.suppress(msgspec.DecodeError):
        tag = msgspec.json.decode(raw, type=_Tagged).op
        if tag not in _OPS:
            return f"unknown op {tag!r}: prompt, permission or cancel"
    return lone_surrogates(raw.encode(errors="surrogatepass")) or why_undecodable(exc)


_OPS = ("prompt", "permission", "cancel")


async def session_ws(websocket: WebSocket) -> None:
    try:
        session = session_of(websocket)
        after = after_seq(websocket)
    except ApiError as error:
        await websocket.close(code=1008, reason=str(error)[:120])
        return
    manager = manager_of(websocket)
    await websocket.accept()
    subscription = session.subscribe(after)
    lock = anyio.Lock()
    state = app_state(websocket)

    async def send_envelopes() -> None:
        while batch := await subscription.next_batch():
            for _, line in batch:
                async with lock:
                    with anyio.fail_after(SEND_TIMEOUT):  # the handler ends: it is left
                        await websocket.send_text(line.decode())
        code = WS_GOING_AWAY if state.shutting_down.is_set() else WS_NORMAL
        async with lock:
            await websocket.close(code=code)

    async def answer(raw: str) -> WsReply:
        try:
            op = msgspec.json.decode(raw, type=WsOp)
        except (msgspec.ValidationError, *UNDECODABLE) as exc:
            return WsReply(
                reply=None, ok=False, error=ErrorDetail("bad_request", _refused(raw, exc))
            )
        tag = op.__struct_config__.tag
        assert tag in _OPS
        try:
            match op:
                case PromptOp():
                    after = await manager.prompt(session, prompt_blocks(op))
                    return WsReply(reply="prompt", ok=True, after=after)
                case PermissionOp():
                    session.resolve(op.request_id, op.option_id)
                case CancelOp():
                    await manager.cancel(session)
        except ApiError as error:
            return WsReply(reply=tag, ok=False, error=ErrorDetail(error.kind, str(error)))
        return WsReply(reply=tag, ok=True)

    async def receive_ops() -> None:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                raise WebSocketDisconnect(message.get("code", WS_NORMAL))
            raw = message.get("text")
            limit = state.config.max_body_bytes
            if raw is None or len(raw.encode(errors="surrogatepass")) > limit:
                error = (
                    ErrorDetail("bad_request", _BINARY)
                    if raw is None
                    else ErrorDetail(
                        "too_large", f"an op is at most {limit} bytes, as a request body"
                    )
                )
                reply = msgspec.json.encode(WsReply(reply=None, ok=False, error=error)).decode()
            else:
                reply = msgspec.json.encode(await answer(raw)).decode()
            async with lock:
                await websocket.send_text(reply)

    try:
        async with anyio.create_task_group() as tg:

            async def sender() -> None:
                # The client left, or shutdown aborted a client that does not read, or
                # it took no frame for SEND_TIMEOUT (TimeoutError).
                with contextlib.suppress(WebSocketDisconnect, TimeoutError):
                    await send_envelopes()
                tg.cancel_scope.cancel()

            async def receiver() -> None:
                # The client left (or closed) first: WebSocketDisconnect, RuntimeError.
                with contextlib.suppress(WebSocketDisconnect, RuntimeError):
                    await receive_ops()
                tg.cancel_scope.cancel()

            tg.start_soon(sender)
            tg.start_soon(receiver)
    finally:
        session.unsubscribe(subscription)


ROUTES: list[BaseRoute] = [WebSocketRoute("/v1/sessions/{session_id}/ws", session_ws)]
