"""The sessions API: ``/v1/agents``, ``/v1/roots`` and ``/v1/sessions/...`` (docs/server.md).

Events go out as envelopes (`envelopes`): over SSE (``id: N``, ``event: gemwire``,
``data: <envelope>``, a ``: keep-alive`` comment every `KEEPALIVE` seconds), over a
WebSocket (one envelope a text frame), or as one JSON document. Each starts after
``?after=N`` (or ``Last-Event-ID``): first what the log holds, then live.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route
from starlette.types import Message, Send
from starlette.websockets import WebSocket

from gemwire.serve_api import (
    Cancelled,
    ConfigBody,
    ModeBody,
    ModelBody,
    NewSession,
    PermissionAnswer,
    PermissionAnswered,
    PromptBody,
    Prompted,
    PromptOp,
    Roots,
    Sessions,
)
from gemwire.server.envelopes import after_seq
from gemwire.server.paths import confine
from gemwire.server.responses import (
    ApiError,
    BadRequest,
    JsonResponse,
    read_json,
)
from gemwire.server.sessions import LiveSession, SessionManager
from gemwire.server.state import app_state
from gemwire.server.streams import Subscription
from gemwire.wire import acp

__all__ = ("KEEPALIVE", "ROUTES", "SEND_TIMEOUT", "manager_of", "prompt_blocks", "session_of")

KEEPALIVE = 15.0
"""Seconds between SSE keep-alive comments."""
SEND_TIMEOUT = 60.0
"""Seconds a client has to take each write of its stream (SSE or WebSocket); one that
takes none for longer is left, its stream ended there: it resumes from its last seq
(``Last-Event-ID``, ``?after=``) and catches up from the log."""
CHUNK_BYTES = 64 * 1024
"""About how much of an SSE stream is written at once."""
DEFAULT_LIMIT = 1000
_MAX_AGENT_SESSION_ID = 256


def _resume(body: NewSession) -> str | None:
    """The agent session ``continue`` names, checked."""
    value = body.continue_
    if value is not None and not (0 < len(value) <= _MAX_AGENT_SESSION_ID and value.isprintable()):
        raise BadRequest(
            f'"continue" must be an agent session id (1 to {_MAX_AGENT_SESSION_ID} '
            "printable characters)"
        )
    return value


def prompt_blocks(body: PromptBody | PromptOp) -> str | list[acp.ContentBlock]:
    """What a prompt (a body, or the WebSocket's op) asks: its text, or its blocks."""
    if (body.text is None) == (body.prompt is None):
        raise BadRequest('give exactly one of "text" and "prompt"')
    return body.text if body.text is not None else list(body.prompt or [])


def manager_of(request: Request | WebSocket) -> SessionManager:
    sessions = app_state(request).sessions
    if sessions is None:
        raise ApiError("the server is not ready", status=503, kind="limit")
    return sessions


def session_of(request: Request | WebSocket) -> LiveSession:
    return manager_of(request).get(request.path_params["session_id"])


# Agents and roots ------------------------------------------------------------------------


async def list_agents(request: Request) -> JsonResponse:
    launcher = app_state(request).launcher
    return JsonResponse(await anyio.to_thread.run_sync(launcher.agents))


async def list_roots(request: Request) -> JsonResponse:
    return JsonResponse(Roots(list(app_state(request).config.roots)))


# Sessions --------------------------------------------------------------------------------


async def create_session(request: Request) -> JsonResponse:
    body = await read_json(request, NewSession)
    resume = _resume(body)
    cwd = confine(body.cwd, app_state(request).config.roots)
    session = await manager_of(request).create(
        body.agent,
        cwd,
        permissions=body.permissions,
        model=body.model,
        mode=body.mode,
        resume=resume,
    )
    return JsonResponse(session.view(), 201)


async def list_sessions(request: Request) -> JsonResponse:
    return JsonResponse(Sessions(manager_of(request).views()))


async def get_session(request: Request) -> JsonResponse:
    return JsonResponse(session_of(request).view())


async def delete_session(request: Request) -> JsonResponse:
    session = session_of(request)
    await manager_of(request).close(session)
    return JsonResponse(session.view())


async def prompt(request: Request) -> JsonResponse:
    body = await read_json(request, PromptBody)
    session = session_of(request)
    after = await manager_of(request).prompt(session, prompt_blocks(body))
    return JsonResponse(Prompted(after), 202)


async def cancel(request: Request) -> JsonResponse:
    session = session_of(request)
    await manager_of(request).cancel(session)
    return JsonResponse(Cancelled(True), 202)


async def answer_permission(request: Request) -> JsonResponse:
    body = await read_json(request, PermissionAnswer)
    session = session_of(request)
    session.resolve(request.path_params["request_id"], body.option_id)
    return JsonResponse(PermissionAnswered(request.path_params["request_id"], body.option_id))


async def set_mode(request: Request) -> JsonResponse:
    body = await read_json(request, ModeBody)
    session = session_of(request)
    await manager_of(request).set_mode(session, body.mode_id)
    return JsonResponse(session.view())


async def set_model(request: Request) -> JsonResponse:
    body = await read_json(request, ModelBody)
    session = session_of(request)
    await manager_of(request).set_model(session, body.model_id)
    return JsonResponse(session.view())


async def set_config(request: Request) -> JsonResponse:
    body = await read_json(request, ConfigBody)
    session = session_of(request)
    await manager_of(request).set_config(session, body.config_id, body.value)
    return JsonResponse(session.view())


# Events ----------------------------------------------------------------------------------


async def events(request: Request) -> Response:
    session = session_of(request)
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
        subscription,
        _sse(session, subscription),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


class _TimedStream(StreamingResponse):
    """A session's SSE stream: a ``: keep-alive`` comment after `KEEPALIVE` seconds
    without a write, and its client left when it takes no write for `SEND_TIMEOUT`.

    One timer task a stream keeps both (`_Watch`): a deadline around each write and each
    wait (anyio's cancel scopes) cost the server more CPU than the rest of an event's way
    from the agent to the client."""

    def __init__(self, subscription: Subscription, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._subscription = subscription

    async def stream_response(self, send: Send) -> None:
        watch = _Watch(self._subscription, send)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(watch.run, tg.cancel_scope)
                await super().stream_response(watch.send)
                tg.cancel_scope.cancel()
        finally:
            # A stream its client left is closed now, and its subscription with it: left
            # to the garbage collector (hypercorn keeps it in a reference cycle), it held
            # its place and its buffer until a collection, and a shutdown waited for it.
            if isinstance(self.body_iterator, AsyncGenerator):
                with anyio.CancelScope(shield=True):
                    await self.body_iterator.aclose()


class _Watch:
    """When a stream last wrote, and since when a write waits for its client."""

    def __init__(self, subscription: Subscription, send: Send) -> None:
        self._subscription = subscription
        self._send = send
        self._wrote = time.monotonic()
        self._sending: float | None = None

    async def send(self, message: Message) -> None:
        self._sending = time.monotonic()
        await self._send(message)
        self._sending = None
        self._wrote = time.monotonic()

    async def run(self, stream: anyio.CancelScope) -> None:
        """Poke the subscription when a keep-alive is due (its wait ends, and the stream
        writes one); cancel ``stream`` when a write has waited `SEND_TIMEOUT`."""
        while True:
            now = time.monotonic()
            sending = self._sending
            if sending is not None:  # no keep-alive while a write waits
                if now - sending >= SEND_TIMEOUT:
                    stream.cancel()  # the client is left
                    return
                wake = min(sending + SEND_TIMEOUT, now + KEEPALIVE)
            elif now - self._wrote >= KEEPALIVE:
                self._subscription.poke()
                self._wrote = now  # the next once KEEPALIVE has passed again
                wake = now + KEEPALIVE
            else:
                wake = self._wrote + KEEPALIVE
            await anyio.sleep(wake - now)


async def _sse(session: LiveSession, subscription: Subscription) -> AsyncIterator[bytes]:
    try:
        yield b": gemwire\n\n"  # the headers go out now, not with the first event
        while True:
            batch = await subscription.next_or_idle()  # None: a keep-alive is due (_Watch)
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
]
