"""The sessions API: ``/v1/agents``, ``/v1/roots`` and ``/v1/sessions/...`` (docs/server.md).

Events go out as envelopes (`envelopes`): over SSE (``id: N``, ``event: gemwire``,
``data: <envelope>``, a ``: keep-alive`` comment every `KEEPALIVE` seconds), over a
WebSocket (one envelope a text frame), or as one JSON document. Each starts after
``?after=N`` (or ``Last-Event-ID``): first what the log holds, then live.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any, Literal

import anyio
import msgspec
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.types import Message, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from gemwire.protocol._undecodable import UNDECODABLE, why_undecodable
from gemwire.server.envelopes import after_seq
from gemwire.server.paths import confine
from gemwire.server.responses import (
    ApiError,
    BadRequest,
    JsonResponse,
    lone_surrogates,
    read_json,
)
from gemwire.server.sessions import LiveSession, SessionManager
from gemwire.server.state import app_state
from gemwire.server.streams import Subscription
from gemwire.wire import acp

__all__ = ("KEEPALIVE", "ROUTES")

KEEPALIVE = 15.0
"""Seconds between SSE keep-alive comments."""
SEND_TIMEOUT = 60.0
"""Seconds a client has to take each write of its stream (SSE or WebSocket); one that
takes none for longer is left, its stream ended there: it resumes from its last seq
(``Last-Event-ID``, ``?after=``) and catches up from the log."""
CHUNK_BYTES = 64 * 1024
"""About how much of an SSE stream is written at once."""
DEFAULT_LIMIT = 1000
WS_GOING_AWAY = 1001
WS_NORMAL = 1000
_MAX_AGENT_SESSION_ID = 256
_BINARY = "ops are JSON in text frames: a binary frame was not read"


class NewSession(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    agent: str = "gemini"
    cwd: str | None = None
    model: str | None = None
    mode: str | None = None
    permissions: Literal["ask", "deny", "reads", "edits", "all"] = "ask"
    continue_: str | None = msgspec.field(default=None, name="continue")
    """The agent's id of a saved session to continue (``session/resume``, else
    ``session/load``)."""

    def resume(self) -> str | None:
        value = self.continue_
        if value is not None and not (
            0 < len(value) <= _MAX_AGENT_SESSION_ID and value.isprintable()
        ):
            raise BadRequest(
                f'"continue" must be an agent session id (1 to {_MAX_AGENT_SESSION_ID} '
                "printable characters)"
            )
        return value


class PromptBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    text: str | None = None
    prompt: list[acp.ContentBlock] | None = None

    def blocks(self) -> str | list[acp.ContentBlock]:
        if (self.text is None) == (self.prompt is None):
            raise BadRequest('give exactly one of "text" and "prompt"')
        return self.text if self.text is not None else list(self.prompt or [])


class PermissionAnswer(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    option_id: str | None


class ModeBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    mode_id: str


class ModelBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    model_id: str


class ConfigBody(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    config_id: str
    value: str | bool
    """One of the option's value ids, or a boolean for a ``type: "boolean"`` option."""


def _manager(request: Request | WebSocket) -> SessionManager:
    sessions = app_state(request).sessions
    if sessions is None:
        raise ApiError("the server is not ready", status=503, kind="limit")
    return sessions


def _session(request: Request | WebSocket) -> LiveSession:
    return _manager(request).get(request.path_params["session_id"])


# Agents and roots ------------------------------------------------------------------------


async def list_agents(request: Request) -> JsonResponse:
    launcher = app_state(request).launcher
    return JsonResponse(await anyio.to_thread.run_sync(launcher.agents))


async def list_roots(request: Request) -> JsonResponse:
    return JsonResponse({"roots": list(app_state(request).config.roots)})


# Sessions --------------------------------------------------------------------------------


async def create_session(request: Request) -> JsonResponse:
    body = await read_json(request, NewSession)
    resume = body.resume()
    cwd = confine(body.cwd, app_state(request).config.roots)
    session = await _manager(request).create(
        body.agent,
        cwd,
        permissions=body.permissions,
        model=body.model,
        mode=body.mode,
        resume=resume,
    )
    return JsonResponse(session.view(), 201)


async def list_sessions(request: Request) -> JsonResponse:
    return JsonResponse({"sessions": _manager(request).views()})


async def get_session(request: Request) -> JsonResponse:
    return JsonResponse(_session(request).view())


async def delete_session(request: Request) -> JsonResponse:
    session = _session(request)
    await _manager(request).close(session)
    return JsonResponse(session.view())


async def prompt(request: Request) -> JsonResponse:
    body = await read_json(request, PromptBody)
    session = _session(request)
    after = await _manager(request).prompt(session, body.blocks())
    return JsonResponse({"after": after}, 202)


async def cancel(request: Request) -> JsonResponse:
    session = _session(request)
    await _manager(request).cancel(session)
    return JsonResponse({"cancelled": True}, 202)


async def answer_permission(request: Request) -> JsonResponse:
    body = await read_json(request, PermissionAnswer)
    session = _session(request)
    session.resolve(request.path_params["request_id"], body.option_id)
    return JsonResponse(
        {"request_id": request.path_params["request_id"], "option_id": body.option_id}
    )


async def set_mode(request: Request) -> JsonResponse:
    body = await read_json(request, ModeBody)
    session = _session(request)
    await _manager(request).set_mode(session, body.mode_id)
    return JsonResponse(session.view())


async def set_model(request: Request) -> JsonResponse:
    body = await read_json(request, ModelBody)
    session = _session(request)
    await _manager(request).set_model(session, body.model_id)
    return JsonResponse(session.view())


async def set_config(request: Request) -> JsonResponse:
    body = await read_json(request, ConfigBody)
    session = _session(request)
    await _manager(request).set_config(session, body.config_id, body.value)
    return JsonResponse(session.view())


# Events ----------------------------------------------------------------------------------


async def events(request: Request) -> Response:
    session = _session(request)
    after = after_seq(request)
    if "application/json" in request.headers.get("accept", ""):
        raw = request.query_params.get("limit", str(DEFAULT_LIMIT))
        # ASCII digits, at most 9: int() of "²" raises, and of 5,000 digits takes long.
        if not (raw.isascii() and raw.isdigit() and len(raw) <= 9) or int(raw) < 1:
            raise BadRequest(f"limit must be a whole number >= 1, not {raw[:40]!r}")
        found = await anyio.to_thread.run_sync(session.log.read, after, int(raw))
        lines = [line for _, line in found]
        body = b'{"events":[%b],"last_seq":%d}' % (b",".join(lines), session.last_seq)
        return Response(body, media_type="application/json")
    subscription = session.subscribe(after)
    return _TimedStream(
        _sse(session, subscription),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


class _Stalled(Exception):
    """A client took no write for `SEND_TIMEOUT`."""


class _TimedStream(StreamingResponse):
    """A stream whose client is left when it takes no write for `SEND_TIMEOUT`."""

    async def stream_response(self, send: Send) -> None:
        async def timed(message: Message) -> None:
            with anyio.move_on_after(SEND_TIMEOUT) as waited:
                await send(message)
            if waited.cancelled_caught:
                raise _Stalled

        with contextlib.suppress(_Stalled):
            await super().stream_response(timed)


async def _sse(session: LiveSession, subscription: Subscription) -> AsyncIterator[bytes]:
    try:
        yield b": gemwire\n\n"  # the headers go out now, not with the first event
        while True:
            # Only the wait is under the deadline: a yield inside it would have the
            # deadline cancel the server's write of the chunk (blocked by a stalled
            # client), in the server's task, not this generator's.
            batch = None
            with anyio.move_on_after(KEEPALIVE):
                batch = await subscription.next_batch()
            if batch is None:
                yield b": keep-alive\n\n"
            elif not batch:
                return
            else:
                for chunk in _chunks(batch):
                    yield chunk
    finally:
        session.unsubscribe(subscription)


def _chunks(batch: list[tuple[int, bytes]]) -> Iterator[bytes]:
    """The SSE messages of ``batch`` in writes of about `CHUNK_BYTES`: each write waits for
    the client to take the one before, so a slow client holds at most one chunk in the
    server's send buffer, not the whole batch."""
    chunk: list[bytes] = []
    size = 0
    for seq, line in batch:
        message = b"id: %d\nevent: gemwire\ndata: %b\n\n" % (seq, line)
        chunk.append(message)
        size += len(message)
        if size >= CHUNK_BYTES:
            yield b"".join(chunk)
            chunk, size = [], 0
    if chunk:
        yield b"".join(chunk)


class _Op(msgspec.Struct, kw_only=True):
    op: str
    text: str | None = None
    prompt: list[acp.ContentBlock] | None = None
    request_id: str | None = None
    option_id: str | None = None


async def session_ws(websocket: WebSocket) -> None:
    try:
        session = _session(websocket)
        after = after_seq(websocket)
    except ApiError as error:
        await websocket.close(code=1008, reason=str(error)[:120])
        return
    manager = _manager(websocket)
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

    async def answer(raw: str) -> dict[str, Any]:
        try:
            op = msgspec.json.decode(raw, type=_Op)
        except (msgspec.ValidationError, *UNDECODABLE) as exc:
            return {
                "reply": None,
                "ok": False,
                "error": {
                    "kind": "bad_request",
                    "message": lone_surrogates(raw.encode(errors="surrogatepass"))
                    or why_undecodable(exc),
                },
            }
        try:
            if op.op == "prompt":
                blocks = PromptBody(text=op.text, prompt=op.prompt).blocks()
                return {
                    "reply": "prompt",
                    "ok": True,
                    "after": await manager.prompt(session, blocks),
                }
            if op.op == "permission":
                if op.request_id is None:
                    raise BadRequest("request_id is required")
                session.resolve(op.request_id, op.option_id)
            elif op.op == "cancel":
                await manager.cancel(session)
            else:
                raise BadRequest(f"unknown op {op.op!r}: prompt, permission or cancel")
        except ApiError as error:
            message = {"kind": error.kind, "message": str(error)}
            return {"reply": op.op, "ok": False, "error": message}
        return {"reply": op.op, "ok": True}

    async def receive_ops() -> None:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                raise WebSocketDisconnect(message.get("code", WS_NORMAL))
            raw = message.get("text")
            limit = state.config.max_body_bytes
            if raw is None or len(raw.encode(errors="surrogatepass")) > limit:
                error = (
                    {"kind": "bad_request", "message": _BINARY}
                    if raw is None
                    else {
                        "kind": "too_large",
                        "message": f"an op is at most {limit} bytes, as a request body",
                    }
                )
                reply = msgspec.json.encode({"reply": None, "ok": False, "error": error}).decode()
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


_S = "/v1/sessions/{session_id}"

ROUTES: list[BaseRoute] = [
    Route("/v1/agents", list_agents),
    Route("/v1/roots", list_roots),
    Route("/v1/sessions", create_session, methods=["POST"]),
    Route("/v1/sessions", list_sessions, methods=["GET"]),
    Route(_S, get_session, methods=["GET"]),
    Route(_S, delete_session, methods=["DELETE"]),
    Route(f"{_S}/prompt", prompt, methods=["POST"]),
    Route(f"{_S}/cancel", cancel, methods=["POST"]),
    Route(f"{_S}/permissions/{{request_id}}", answer_permission, methods=["POST"]),
    Route(f"{_S}/mode", set_mode, methods=["POST"]),
    Route(f"{_S}/model", set_model, methods=["POST"]),
    Route(f"{_S}/config", set_config, methods=["POST"]),
    Route(f"{_S}/events", events, methods=["GET"]),
    WebSocketRoute(f"{_S}/ws", session_ws),
]
