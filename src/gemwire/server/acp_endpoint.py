"""`AcpEndpoint`: any ACP agent on the network, as the transport RFD has it (a pure ASGI app).

Mounted at ``/acp`` (``?agent=``) and ``/acp/{agent}`` (`agent_named`), it speaks both of
the RFD's transports:

- **WebSocket** (`Socket`): the upgrade starts one agent process for the socket (its
  ``Acp-Connection-Id`` comes on the accept); each text frame is one JSON-RPC message,
  both ways; either side ending ends the other.
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

import secrets
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import asynccontextmanager
from functools import partial

import anyio
from anyio.abc import TaskGroup

from gemwire.errors import AgentNotFound
from gemwire.protocol.acp.remote import (
    CONNECTION_ID_HEADER,
    SESSION_ID_HEADER,
    Peeked,
    attaches_session,
    carries_session_header,
    invalid_request,
    is_batch,
    peek,
    with_connection_id,
)
from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES
from gemwire.runners.acp.channel import CLOSE_GRACE, AgentChannel
from gemwire.server.acp_connection import HttpConnection
from gemwire.server.acp_endpoint_agents import (
    AGENT_PARAMETER,
    DEFAULT_AGENT,
    AgentLauncher,
    agent_named,
    launch_built_in,
    server_launcher,
)
from gemwire.server.acp_endpoint_asgi import (
    NOT_A_METHOD,
    NOT_JSON,
    Receive,
    Scope,
    Send,
    body_of,
    deny,
    error,
    event_stream,
    headers_of,
    respond,
)
from gemwire.server.acp_endpoint_socket import (
    Socket,
)
from gemwire.server.acp_idle import Activity, Clock
from gemwire.server.acp_roots import Refused, SessionFolders
from gemwire.server.config import DEFAULT_IDLE_TIMEOUT

__all__ = (
    "AGENT_PARAMETER",
    "DEFAULT_AGENT",
    "AcpEndpoint",
    "AgentLauncher",
    "agent_named",
    "launch_built_in",
    "server_launcher",
)

MAX_CONNECTIONS = 32
"""Agents the endpoint runs at once (one a connection); the next connection is 503."""
_GOING_AWAY = 1001
_SHUTTING_DOWN = "the server is shutting down"


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
        self._sockets: dict[str, Socket] = {}

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
                await error(send, 405, "bad_request", f"{method} is not an ACP method here")

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
            await deny(scope, send, 503, "limit", refused)
            return
        try:
            await self._serve_socket(scope, receive, send)
        finally:
            self._release()

    async def _serve_socket(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            channel = self._launch(scope)
        except AgentNotFound as exc:
            await deny(scope, send, 404, "not_found", str(exc))
            return
        socket_id = secrets.token_hex(16)
        self._sockets[socket_id] = socket = Socket(Activity(self._clock))
        if self._closing is not None and self._closing.is_set():
            socket.close(_GOING_AWAY, _SHUTTING_DOWN)
        try:
            await socket.serve(socket_id, channel, self._folders, scope, receive, send)
        finally:
            del self._sockets[socket_id]

    # Streamable HTTP -----------------------------------------------------------------

    async def _post(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = headers_of(scope)
        if not headers.get("content-type", "").lower().startswith("application/json"):
            await error(send, 415, "bad_request", "Content-Type must be application/json")
            return
        body = await body_of(receive, DEFAULT_MAX_LINE_BYTES)
        if body is None:
            message = f"the message is over {DEFAULT_MAX_LINE_BYTES} bytes"
            await error(send, 413, "too_large", message)
            return
        seen = peek(body)
        if seen is None:
            if is_batch(body):
                await error(send, 501, "not_implemented", "ACP takes no JSON-RPC batches")
            else:
                await error(send, 400, "bad_request", NOT_JSON)
            return
        if seen.request and seen.method == "initialize":
            await self._open(scope, body, seen, send)
            return
        connection = await self._connection(headers, send)
        if connection is None:
            return
        session_id = headers.get(SESSION_ID_HEADER.lower())
        if session_id is None and carries_session_header(seen.method):
            await error(send, 400, "bad_request", f"{seen.method} needs {SESSION_ID_HEADER}")
            return
        attaching = seen.request and attaches_session(seen.method)
        if session_id is not None and not connection.knows(session_id) and not attaching:
            await error(send, 404, "not_found", f"no session {session_id!r} on this connection")
            return
        if seen.invalid:
            await respond(send, 202, b"")
            await connection.answer(invalid_request(seen.key, NOT_A_METHOD), seen)
            return
        checked = self._folders.check(body)
        if isinstance(checked, Refused):
            await respond(send, 202, b"")
            if checked.answer is not None:
                await connection.answer(checked.answer, seen)
            return
        if checked is not body:  # its folders as their real paths: the id as encoded anew
            seen = peek(checked) or seen
        await connection.deliver(checked, seen)
        await respond(send, 202, b"")

    async def _open(self, scope: Scope, body: bytes, seen: Peeked, send: Send) -> None:
        if self._tg is None:
            await error(send, 503, "limit", "the ACP endpoint is not running (its lifespan)")
            return
        if refused := self._take_slot():
            await error(send, 503, "limit", refused)
            return
        try:
            channel = self._launch(scope)
        except AgentNotFound as exc:
            self._release()
            await error(send, 404, "not_found", str(exc))
            return
        connection = HttpConnection(
            secrets.token_hex(16), channel, on_end=self._forget, activity=Activity(self._clock)
        )
        # Known before it starts: a shutdown meanwhile ends it too.
        self.connections[connection.connection_id] = connection
        try:
            await self._tg.start(connection.run)  # its end (even failing to start) frees the slot
        except AgentNotFound as exc:
            await error(send, 404, "not_found", str(exc))
            return
        answer = await connection.ask(body, seen)
        if answer is None:
            ended = connection.ended.is_set()
            connection.end()
            if ended:
                await error(send, 502, "crashed", "the agent ended before answering initialize")
            else:
                await error(send, 504, "timeout", "the agent did not answer initialize in time")
            return
        header = (CONNECTION_ID_HEADER.lower().encode(), connection.connection_id.encode())
        await respond(send, 200, with_connection_id(answer, connection.connection_id), [header])

    async def _get(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = headers_of(scope)
        accept = headers.get("accept", "")
        if "text/event-stream" not in accept and "*/*" not in accept:
            await error(send, 406, "bad_request", "Accept must include text/event-stream")
            return
        connection = await self._connection(headers, send)
        if connection is None:
            return
        session_id = headers.get(SESSION_ID_HEADER.lower())
        # A session's stream opens before the session is on the connection: the RFD's
        # resume flow opens it, then POSTs the load (docs/server.md).
        box = connection.stream if session_id is None else connection.open_session(session_id)
        if box.attached:
            await error(send, 409, "conflict", "this stream is open already")
            return
        box.attached = True
        if session_id is None:
            connection.attached.set()
        gone = False
        try:
            gone = await event_stream(box.get, receive, send)
        finally:
            box.attached = False
            if gone and session_id is None:
                connection.end()  # the client dropped the connection: stop its agent

    async def _delete(self, scope: Scope, send: Send) -> None:
        connection = await self._connection(headers_of(scope), send)
        if connection is None:
            return
        connection.end()
        with anyio.move_on_after(CLOSE_GRACE * 2):
            await connection.stopped.wait()
        await respond(send, 202, b"")

    async def _connection(self, headers: dict[str, str], send: Send) -> HttpConnection | None:
        connection_id = headers.get(CONNECTION_ID_HEADER.lower())
        if connection_id is None:
            await error(send, 400, "bad_request", f"{CONNECTION_ID_HEADER} is missing")
            return None
        connection = self.connections.get(connection_id)
        if connection is None:
            await error(send, 404, "not_found", f"no connection {connection_id!r}")
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
