"""`AcpEndpoint`: any ACP agent on the network, as the transport RFD has it (a pure ASGI app).

Mounted at ``/acp/{agent}`` (the route's ``agent`` path parameter names the agent), it
speaks both of the RFD's transports, as the ACP Python SDK 0.12.1 does:

- **WebSocket**: the upgrade starts one agent process for the socket (its
  ``Acp-Connection-Id`` comes on the accept); each text frame is one JSON-RPC message,
  both ways. The socket closing stops the agent; the agent ending closes the socket
  (1000 when it exited with 0, else 1011, the reason saying how).
- **Streamable HTTP**: ``POST`` a message (``initialize`` starts the agent and answers
  in the body with the ``Acp-Connection-Id``; the rest get 202), ``GET`` the
  connection's or a session's SSE stream (``Acp-Session-Id``), ``DELETE`` to stop.
  The connection's stream dropping stops the agent too (`HttpConnection`).

One agent process per connection, from the injected ``launcher`` (by default the
built-in agents, `launch_built_in`; in `gemwire serve`, the server's agents through
`server_launcher`); an unknown agent is 404, a connection past ``max_connections`` 503.
Messages pass as they came, byte for byte (but for the folders below); the agent's go
out as soon as the client takes them, never piling up (`Outbox`). What the client sends is
checked first: a frame that is not a JSON object is answered with a JSON-RPC parse error
and never reaches the agent; one over the line cap (64 MiB) closes the socket with 1009,
or is refused with 413 over HTTP; a folder named for a session outside the ``roots`` is
answered with a JSON-RPC error (invalid params), and the folders that pass reach the
agent as their real paths (`SessionFolders`). Tokens and ``Origin`` are the mounting
server's (its middleware).

A connection with no message either way for ``idle_timeout`` and no turn running ends
(`Activity`, `reap_idle`): its WebSocket closes with 1001, or its Streamable HTTP streams
end, and its agent stops. Without it a client that vanished without a word (uvicorn
sends no WebSocket pings) would hold its agent, and a connection slot, for ever.

Streamable HTTP connections outlive their requests: they run in `running` (the app's
lifespan, which this app handles itself when it is the whole server), as the ending of
idle connections does.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncGenerator, Awaitable, Callable, MutableMapping, Sequence
from contextlib import asynccontextmanager
from functools import partial
from typing import Any
from urllib.parse import parse_qs

import anyio
import msgspec
from anyio.abc import TaskGroup

from gemwire._normalize.masking import known_secrets
from gemwire.errors import AgentNotFound
from gemwire.protocol.acp.remote import (
    CONNECTION_ID_HEADER,
    SESSION_ID_HEADER,
    Peeked,
    attaches_session,
    carries_session_header,
    invalid_request,
    is_batch,
    parse_error,
    peek,
    with_connection_id,
)
from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES
from gemwire.protocol.sse import KEEP_ALIVE, encode_event
from gemwire.runners.acp.channel import CLOSE_GRACE, AgentChannel
from gemwire.runners.acp.process_channel import AgentLaunch, ProcessChannel
from gemwire.runners.agents import AGENTS, resolve_agent
from gemwire.server.acp_connection import HttpConnection, agent_messages, one_line
from gemwire.server.acp_idle import Activity, Clock
from gemwire.server.acp_roots import Refused, SessionFolders
from gemwire.server.agents import AgentLauncher as ServerLauncher
from gemwire.server.config import DEFAULT_IDLE_TIMEOUT
from gemwire.server.responses import NotFound

__all__ = (
    "AGENT_PARAMETER",
    "DEFAULT_AGENT",
    "AcpEndpoint",
    "AgentLauncher",
    "agent_named",
    "launch_built_in",
    "server_launcher",
)

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

AgentLauncher = Callable[[str], AgentChannel]
"""The channel of a new agent process by its name; `AgentNotFound` for no such agent."""

KEEP_ALIVE_INTERVAL = 15.0
MAX_CONNECTIONS = 32
"""Agents the endpoint runs at once (one a connection); the next connection is 503."""
_TOO_BIG = 1009
_GOING_AWAY = 1001
_SHUTTING_DOWN = "the server is shutting down"
_NOT_JSON = "the message is not a JSON-RPC message (a JSON object, UTF-8)"
_NOT_A_METHOD = "method must be a string"
AGENT_PARAMETER = "agent"
"""The query parameter naming the agent at ``/acp`` (``/acp?agent=claude``)."""
DEFAULT_AGENT = "gemini"
"""The agent of ``/acp`` when the URL names none."""


def launch_built_in(name: str) -> AgentChannel:
    """A built-in agent (`resolve_agent`: ``gemini``, ``claude``, ...) as a process."""
    resolved = resolve_agent(name)
    launch = AgentLaunch(command=resolved.command, env=dict(AGENTS[resolved.name].env))
    return ProcessChannel(launch, secrets=known_secrets(launch.environment()))


def server_launcher(launcher: ServerLauncher, cwd: str) -> AgentLauncher:
    """The endpoint's launcher over the server's: its agents (``--agent`` ones, an
    environment without the server's token; never a ``--warm`` spare, which a session's
    ``initialize`` primed), each process started in ``cwd``
    (the first root; the client names its session's folder in ``session/new``, which the
    endpoint holds to the roots)."""

    def launch(name: str) -> AgentChannel:
        try:
            return launcher.channel(launcher.options(name, cwd))
        except NotFound as exc:
            raise AgentNotFound(str(exc)) from exc

    return launch


class AcpEndpoint:
    """The ASGI app; ``launcher`` starts the agent of each connection, at most
    ``max_connections`` at once; the folders a client names for a session must lie under
    ``roots`` (by real path: `SessionFolders`; by default the current folder, as for
    ``gemwire serve``); a connection idle for ``idle_timeout`` seconds ends (`Activity`,
    timed by ``clock``)."""

    def __init__(
        self,
        launcher: AgentLauncher = launch_built_in,
        *,
        roots: Sequence[str] = (".",),
        max_connections: int = MAX_CONNECTIONS,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        clock: Clock = anyio.current_time,
    ) -> None:
        self._launcher = launcher
        self._folders = SessionFolders(roots)
        self._max = max_connections
        self._idle_timeout = idle_timeout
        self._clock = clock
        self._live = 0
        self._tg: TaskGroup | None = None
        self._closing: anyio.Event | None = None
        self._freed: anyio.Event | None = None
        self.connections: dict[str, HttpConnection] = {}
        """The live Streamable HTTP connections, by id."""
        self._sockets: dict[str, _Socket] = {}

    @asynccontextmanager
    async def running(self) -> AsyncGenerator[None]:
        """Where Streamable HTTP connections run, and idle connections are ended; leaving
        it stops every agent."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            self._closing, self._freed = anyio.Event(), anyio.Event()
            reaping = anyio.CancelScope()
            tg.start_soon(self._reap, reaping)
            try:
                yield
            finally:
                reaping.cancel()
                self._tg = None
                self.end_all()

    def end_all(self) -> None:
        """End every connection now: Streamable HTTP streams end, WebSockets close with
        1001, their agents stop. (A server shutting down calls it first: uvicorn waits for
        open streams to end before the lifespan ends.)"""
        if self._closing is not None:
            self._closing.set()
        for connection in list(self.connections.values()):
            connection.end()
        for socket in self._sockets.values():
            socket.close(_GOING_AWAY, _SHUTTING_DOWN)

    async def drain(self) -> None:
        """`end_all`, then wait until every connection has ended and its agent stopped
        (a server shutting down, before it closes the sockets under them)."""
        self.end_all()
        while self._live and self._freed is not None:
            await self._freed.wait()

    def reap_idle(self) -> float:
        """End every connection idle for ``idle_timeout`` (no message either way, no turn
        running): a WebSocket closes with 1001, a Streamable HTTP connection's streams
        end; their agents stop. The seconds until another may be idle that long."""
        timeout = self._idle_timeout
        reason = f"idle for {timeout:g} s (no message either way, no turn running)"
        ends: list[tuple[Activity, Callable[[], None]]] = [
            (c.activity, c.end) for c in self.connections.values()
        ]
        ends += [
            (s.activity, partial(s.close, _GOING_AWAY, reason)) for s in self._sockets.values()
        ]
        wait = timeout
        for activity, end in ends:
            idle = activity.idle_for()
            if idle is None:
                continue
            if idle >= timeout:
                end()
            else:
                wait = min(wait, timeout - idle)
        return wait

    async def _reap(self, scope: anyio.CancelScope) -> None:
        with scope:
            while True:  # noqa: ASYNC110 - time passing is what it waits for
                await anyio.sleep(self.reap_idle())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket":
            await self._websocket(scope, receive, send)
        elif kind == "http":
            method = scope["method"]
            if method == "POST":
                await self._post(scope, receive, send)
            elif method == "GET":
                await self._get(scope, receive, send)
            elif method == "DELETE":
                await self._delete(scope, send)
            else:
                await _error(send, 405, "bad_request", f"{method} is not an ACP method here")

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "lifespan.startup":
            return
        async with self.running():
            await send({"type": "lifespan.startup.complete"})
            while (await receive())["type"] != "lifespan.shutdown":
                pass
        await send({"type": "lifespan.shutdown.complete"})

    # WebSocket ----------------------------------------------------------------------

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (await receive())["type"] != "websocket.connect":
            return
        if refused := self._take_slot():
            await _deny(scope, send, 503, "limit", refused)
            return
        try:
            await self._serve_socket(scope, receive, send)
        finally:
            self._release()

    async def _serve_socket(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            channel = self._launch(scope)
        except AgentNotFound as exc:
            await _deny(scope, send, 404, "not_found", str(exc))
            return
        async with contextlib.AsyncExitStack() as stack:
            try:
                await stack.enter_async_context(channel)
            except AgentNotFound as exc:  # its command cannot be run
                await _deny(scope, send, 404, "not_found", str(exc))
                return
            socket_id = secrets.token_hex(16)
            header = (CONNECTION_ID_HEADER.lower().encode(), socket_id.encode())
            await send({"type": "websocket.accept", "headers": [header]})
            self._sockets[socket_id] = socket = _Socket(Activity(self._clock))
            if self._closing is not None and self._closing.is_set():
                socket.close(_GOING_AWAY, _SHUTTING_DOWN)
            try:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_agent_to_socket, channel, send, socket.activity)
                    tg.start_soon(_close_when_asked, socket, tg.cancel_scope, send)
                    await self._socket_to_agent(channel, receive, send, socket.activity)
                    tg.cancel_scope.cancel()
            finally:
                del self._sockets[socket_id]
            with anyio.CancelScope(shield=True):
                await channel.close(CLOSE_GRACE)

    async def _socket_to_agent(
        self, channel: AgentChannel, receive: Receive, send: Send, activity: Activity
    ) -> None:
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
                    answer = invalid_request(seen.key, _NOT_A_METHOD)
                    await send({"type": "websocket.send", "text": answer.decode()})
                elif data.strip():
                    await send({"type": "websocket.send", "text": parse_error(_NOT_JSON).decode()})
                continue
            checked = self._folders.check(data)
            if isinstance(checked, Refused):
                activity.client_sent(None)
                if checked.answer is not None:
                    await send({"type": "websocket.send", "text": checked.answer.decode()})
                continue
            activity.client_sent(seen)
            await channel.send(one_line(checked) + b"\n")

    # Streamable HTTP -----------------------------------------------------------------

    async def _post(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = _headers(scope)
        if not headers.get("content-type", "").lower().startswith("application/json"):
            await _error(send, 415, "bad_request", "Content-Type must be application/json")
            return
        body = await _body(receive, DEFAULT_MAX_LINE_BYTES)
        if body is None:
            message = f"the message is over {DEFAULT_MAX_LINE_BYTES} bytes"
            await _error(send, 413, "too_large", message)
            return
        seen = peek(body)
        if seen is None:
            if is_batch(body):
                await _error(send, 501, "not_implemented", "ACP takes no JSON-RPC batches")
            else:
                await _error(send, 400, "bad_request", _NOT_JSON)
            return
        if seen.request and seen.method == "initialize":
            await self._open(scope, body, seen, send)
            return
        connection = await self._connection(headers, send)
        if connection is None:
            return
        session_id = headers.get(SESSION_ID_HEADER.lower())
        if session_id is None and carries_session_header(seen.method):
            await _error(send, 400, "bad_request", f"{seen.method} needs {SESSION_ID_HEADER}")
            return
        attaching = seen.request and attaches_session(seen.method)
        if session_id is not None and not connection.knows(session_id) and not attaching:
            await _error(send, 404, "not_found", f"no session {session_id!r} on this connection")
            return
        if seen.invalid:
            await _respond(send, 202, b"")
            await connection.answer(invalid_request(seen.key, _NOT_A_METHOD), seen)
            return
        checked = self._folders.check(body)
        if isinstance(checked, Refused):
            await _respond(send, 202, b"")
            if checked.answer is not None:
                await connection.answer(checked.answer, seen)
            return
        if checked is not body:  # its folders as their real paths: the id as encoded anew
            seen = peek(checked) or seen
        await connection.deliver(checked, seen)
        await _respond(send, 202, b"")

    async def _open(self, scope: Scope, body: bytes, seen: Peeked, send: Send) -> None:
        if self._tg is None:
            await _error(send, 503, "limit", "the ACP endpoint is not running (its lifespan)")
            return
        if refused := self._take_slot():
            await _error(send, 503, "limit", refused)
            return
        try:
            channel = self._launch(scope)
        except AgentNotFound as exc:
            self._release()
            await _error(send, 404, "not_found", str(exc))
            return
        connection = HttpConnection(
            secrets.token_hex(16), channel, on_end=self._forget, activity=Activity(self._clock)
        )
        # Known before it starts: a shutdown meanwhile ends it too.
        self.connections[connection.connection_id] = connection
        try:
            await self._tg.start(connection.run)  # its end (even failing to start) frees the slot
        except AgentNotFound as exc:
            await _error(send, 404, "not_found", str(exc))
            return
        answer = await connection.ask(body, seen)
        if answer is None:
            ended = connection.ended.is_set()
            connection.end()
            if ended:
                await _error(send, 502, "crashed", "the agent ended before answering initialize")
            else:
                await _error(send, 504, "timeout", "the agent did not answer initialize in time")
            return
        header = (CONNECTION_ID_HEADER.lower().encode(), connection.connection_id.encode())
        await _respond(send, 200, with_connection_id(answer, connection.connection_id), [header])

    async def _get(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = _headers(scope)
        accept = headers.get("accept", "")
        if "text/event-stream" not in accept and "*/*" not in accept:
            await _error(send, 406, "bad_request", "Accept must include text/event-stream")
            return
        connection = await self._connection(headers, send)
        if connection is None:
            return
        session_id = headers.get(SESSION_ID_HEADER.lower())
        # A session's stream opens before the session is on the connection: the RFD's
        # resume flow opens it, then POSTs the load (docs/server.md).
        box = connection.stream if session_id is None else connection.open_session(session_id)
        if box.attached:
            await _error(send, 409, "conflict", "this stream is open already")
            return
        box.attached = True
        if session_id is None:
            connection.attached.set()
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
                        message = await box.get()
                    if message is None:
                        break
                    await send(
                        {
                            "type": "http.response.body",
                            "body": encode_event(message) if message else KEEP_ALIVE,
                            "more_body": True,
                        }
                    )
                tg.cancel_scope.cancel()
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:  # the client went while we wrote
            gone = True
        finally:
            box.attached = False
            if gone and session_id is None:
                connection.end()  # the client dropped the connection: stop its agent

    async def _delete(self, scope: Scope, send: Send) -> None:
        connection = await self._connection(_headers(scope), send)
        if connection is None:
            return
        connection.end()
        with anyio.move_on_after(CLOSE_GRACE * 2):
            await connection.stopped.wait()
        await _respond(send, 202, b"")

    async def _connection(self, headers: dict[str, str], send: Send) -> HttpConnection | None:
        connection_id = headers.get(CONNECTION_ID_HEADER.lower())
        if connection_id is None:
            await _error(send, 400, "bad_request", f"{CONNECTION_ID_HEADER} is missing")
            return None
        connection = self.connections.get(connection_id)
        if connection is None:
            await _error(send, 404, "not_found", f"no connection {connection_id!r}")
        return connection

    def _forget(self, connection_id: str) -> None:
        self.connections.pop(connection_id, None)
        self._release()

    def _release(self) -> None:
        self._live -= 1
        if self._freed is not None:
            self._freed.set()
            self._freed = anyio.Event()

    def _take_slot(self) -> str | None:
        """Count a new connection in; else why not."""
        if self._closing is not None and self._closing.is_set():
            return "the server is shutting down"
        if self._live >= self._max:
            return f"the ACP endpoint runs {self._max} agents already; close one first"
        self._live += 1
        return None

    def _launch(self, scope: Scope) -> AgentChannel:
        return self._launcher(agent_named(scope))


class _Socket:
    """One WebSocket connection: its traffic, and how it is to close (`close`)."""

    def __init__(self, activity: Activity) -> None:
        self.activity = activity
        self.closing = anyio.Event()
        self.code = 1000
        self.reason = ""

    def close(self, code: int, reason: str) -> None:
        """Close the socket with ``code`` and ``reason``, stopping its agent (the first
        reason given wins)."""
        if not self.closing.is_set():
            self.code, self.reason = code, reason
            self.closing.set()


async def _agent_to_socket(channel: AgentChannel, send: Send, activity: Activity) -> None:
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


async def _close_when_asked(socket: _Socket, scope: anyio.CancelScope, send: Send) -> None:
    await socket.closing.wait()
    scope.cancel()
    with anyio.CancelScope(shield=True), contextlib.suppress(OSError):
        await send({"type": "websocket.close", "code": socket.code, "reason": socket.reason})


def agent_named(scope: Scope) -> str:
    """The agent a request names: the ``agent`` path parameter (``/acp/{agent}``), else
    the ``agent`` query parameter (``/acp?agent=NAME``), else `DEFAULT_AGENT`."""
    name = scope.get("path_params", {}).get(AGENT_PARAMETER)
    if isinstance(name, str) and name:
        return name
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    return (query.get(AGENT_PARAMETER) or [DEFAULT_AGENT])[-1] or DEFAULT_AGENT


def _headers(scope: Scope) -> dict[str, str]:
    return {
        key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]
    }


async def _body(receive: Receive, limit: int) -> bytes | None:
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


async def _respond(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    all_headers = [(b"content-type", b"application/json"), *(headers or [])]
    await send({"type": "http.response.start", "status": status, "headers": all_headers})
    await send({"type": "http.response.body", "body": body})


async def _error(send: Send, status: int, kind: str, message: str) -> None:
    body = msgspec.json.encode({"error": {"kind": kind, "message": message}})
    await _respond(send, status, body)


async def _deny(scope: Scope, send: Send, status: int, kind: str, message: str) -> None:
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
