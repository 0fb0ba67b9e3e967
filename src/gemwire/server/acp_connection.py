"""One Streamable HTTP connection of the ACP endpoint: its agent, its streams, its routes.

`HttpConnection` owns the agent's channel for as long as the connection lives (a task of
the endpoint's task group: the agent outlives each request). It routes each message the
agent writes as the transport RFD says: the answer to a request is found by its ``id``;
an answer that opens a session (``session/new``'s, ``session/fork``'s) goes on the
connection's stream, which the client has open, and opens that session's stream; the
answer to a request on a session, and a request or notification naming a session whose
stream exists, go on that session's stream; the rest on the connection's. Messages pass
as they came.

A ``session/load``, ``session/resume`` or ``session/fork`` opens the stream of the session
its params name as it arrives (`deliver`), as does a client's GET of that session (the
RFD's resume flow opens it before it POSTs the load). While the attach waits for its
answer, the replay and then the answer go on one stream, so that no client reads the answer
before the end of the replay (and takes the session as loaded without its history): the
session's when the client reads it, else the connection's (the ACP Python SDK's clients
open the session's only once the replay or the answer names it). An attach the agent
refuses closes the session's stream again, unless the session was open on the connection
before.

Every stream is an `Outbox` of bounded size: while one is full the agent is not read,
so a client that never reads holds the agent back (its stdout pipe fills) instead of
filling the server's memory.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Callable

import anyio
from anyio.abc import TaskStatus

from gemwire.protocol.acp.remote import Peeked, attaches_session, peek
from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES, LineBuffer, OversizedLine
from gemwire.runners.acp.channel import CLOSE_GRACE, AgentChannel
from gemwire.server.acp_idle import Activity

__all__ = ("OUTBOX_BYTES", "HttpConnection", "Outbox", "agent_messages", "one_line")

OUTBOX_BYTES = 1024 * 1024
"""What a stream holds for a client that has not read it yet (one message always fits)."""

ATTACH_TIMEOUT = 30.0
"""Seconds a new connection waits for its client to open the connection's stream."""

ANSWER_TIMEOUT = 30.0
"""Seconds the agent has to answer ``initialize`` (its answer is the POST's body)."""


class Outbox:
    """Messages for one stream, at most `OUTBOX_BYTES` of them waiting.

    >>> async def demo() -> list[bytes | None]:
    ...     box = Outbox()
    ...     await box.put(b"a")
    ...     box.close()
    ...     return [await box.get(), await box.get()]
    >>> anyio.run(demo)
    [b'a', None]
    """

    def __init__(self, limit: int = OUTBOX_BYTES) -> None:
        self._items: deque[bytes] = deque()
        self._size = 0
        self._limit = limit
        self._changed = anyio.Event()
        self.closed = False
        self.attached = False
        """A client is reading it (one at a time)."""

    async def put(self, message: bytes) -> None:
        """Wait for room, then add ``message`` (dropped once closed)."""
        while self._items and self._size + len(message) > self._limit and not self.closed:
            await self._changed.wait()
        if not self.closed:
            self._items.append(message)
            self._size += len(message)
            self._notify()

    async def get(self) -> bytes | None:
        """The next message; ``None`` once closed and empty. Cancelling it loses nothing."""
        while not self._items:
            if self.closed:
                return None
            await self._changed.wait()
        message = self._items.popleft()
        self._size -= len(message)
        self._notify()
        return message

    def close(self) -> None:
        self.closed = True
        self._notify()

    async def drained(self) -> None:
        """Wait until a client has taken every message."""
        while self._items:
            await self._changed.wait()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()


async def agent_messages(channel: AgentChannel) -> AsyncIterator[bytes]:
    """The agent's messages, one at a time, whatever its channel's framing; a message
    over the line cap is dropped, blank lines skipped."""
    lines = LineBuffer(DEFAULT_MAX_LINE_BYTES) if channel.framing == "lines" else None
    while data := await channel.receive():
        if lines is None:
            if len(data) <= DEFAULT_MAX_LINE_BYTES:
                yield data
            continue
        for line in lines.feed(data):
            if not isinstance(line, OversizedLine) and line.strip():
                yield line
    for line in lines.close() if lines is not None else ():
        if not isinstance(line, OversizedLine) and line.strip():
            yield line


def one_line(message: bytes) -> bytes:
    """A checked JSON message as one line for the agent's stdin: a raw newline in valid
    JSON is whitespace, so it becomes a space.

    >>> one_line(b'{\\n "id": 1\\r\\n}')
    b'{  "id": 1  }'
    """
    if b"\n" in message or b"\r" in message:
        return message.replace(b"\n", b" ").replace(b"\r", b" ")
    return message


class _Answer:
    def __init__(self) -> None:
        self.ready = anyio.Event()
        self.message: bytes | None = None


class HttpConnection:
    """The agent of one connection (``connection_id``) behind its ``channel``; run by
    `run` in the endpoint's task group, ended by `end` (DELETE, the client gone, idle)."""

    def __init__(
        self,
        connection_id: str,
        channel: AgentChannel,
        *,
        on_end: Callable[[str], None],
        activity: Activity,
    ) -> None:
        self.connection_id = connection_id
        self.channel = channel
        self.activity = activity
        """Its traffic either way (the endpoint ends it once idle)."""
        self.stream = Outbox()
        self.sessions: dict[str, Outbox] = {}
        self._opened: set[str] = set()  # sessions the agent opened or attached here
        self.ended = anyio.Event()
        self.stopped = anyio.Event()
        self.attached = anyio.Event()
        """The client opened the connection's stream (else it is gone: `ATTACH_TIMEOUT`)."""
        self._on_end = on_end
        self._routes: dict[bytes, tuple[str, bool]] = {}  # request: its session, attaching it
        self._answers: dict[bytes, _Answer] = {}
        self._write = anyio.Lock()
        self._linger = False  # the agent ended: what its streams hold waits a little

    def end(self) -> None:
        """End the connection now (DELETE, the client gone): stop the agent."""
        self.ended.set()

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Start the agent (an error starting it is the caller's), route its messages
        until the connection ends, then stop it."""
        try:
            async with self.channel:
                task_status.started()
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._pump)
                    tg.start_soon(self._await_client)
                    await self.ended.wait()
                    tg.cancel_scope.cancel()
                with anyio.CancelScope(shield=True):
                    await self.channel.close(CLOSE_GRACE)
        finally:
            self.ended.set()
            boxes = (self.stream, *self.sessions.values())
            for box in boxes:
                box.close()
            for answer in self._answers.values():
                answer.ready.set()
            self.stopped.set()
            # The agent's last words may wait for a stream the client is opening.
            with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_GRACE):
                for box in boxes if self._linger else ():
                    await box.drained()
            self._on_end(self.connection_id)

    async def ask(self, message: bytes, seen: Peeked) -> bytes | None:
        """Send a request whose answer is the caller's (``initialize``); ``None`` when
        the agent ends first or takes longer than `ANSWER_TIMEOUT`."""
        assert seen.key is not None
        self._answers[seen.key] = answer = _Answer()
        await self.deliver(message, seen)
        with anyio.move_on_after(ANSWER_TIMEOUT):
            await answer.ready.wait()
        self._answers.pop(seen.key, None)
        return answer.message

    def open_session(self, session_id: str) -> Outbox:
        """The stream of ``session_id``, opened if it is not (a GET of it, an attach)."""
        return self.sessions.setdefault(session_id, Outbox())

    async def deliver(self, message: bytes, seen: Peeked) -> None:
        """A client's message, to the agent; its answer will find the session's stream."""
        self.activity.client_sent(seen)
        if seen.request and seen.session_id is not None:
            assert seen.key is not None
            attaching = attaches_session(seen.method)
            self._routes[seen.key] = (seen.session_id, attaching)
            if attaching:
                self.open_session(seen.session_id)
        async with self._write:
            await self.channel.send(one_line(message) + b"\n")

    async def answer(self, message: bytes, seen: Peeked) -> None:
        """The endpoint's own answer to the client's message ``seen``, which the agent
        never saw (its folders refused, no method): on the connection's stream, as the
        agent's would be; a refused attach closes the session's stream it opened."""
        self.activity.client_sent(None)
        if attaches_session(seen.method) and seen.session_id is not None:
            self._attached(seen.session_id, ok=False)
        await self.stream.put(message)

    async def _pump(self) -> None:
        async for message in agent_messages(self.channel):
            await self._route(message)
        self._linger = True
        self.end()

    async def _await_client(self) -> None:
        with anyio.move_on_after(ATTACH_TIMEOUT):
            await self.attached.wait()
            return
        self.end()  # the client never opened its stream: it is gone

    async def _route(self, message: bytes) -> None:
        seen = peek(message)
        self.activity.agent_sent(seen)
        box = self.stream
        if seen is not None and seen.response:
            assert seen.key is not None
            answer = self._answers.pop(seen.key, None)
            if answer is not None:
                answer.message = message
                answer.ready.set()
                return
            session_id, attaching = self._routes.pop(seen.key, (None, False))
            if attaching:  # the answer stays here; a refused attach closes what it opened
                assert session_id is not None
                self._attached(session_id, ok=not seen.failed)
                replay = self.sessions.get(session_id)
                if replay is not None and replay.attached:  # after the replay, on its stream
                    box = replay
            elif session_id is not None and session_id in self.sessions:
                box = self.sessions[session_id]
            opened = (
                None
                if seen.failed or (session_id is not None and not attaching)
                else seen.session_id
            )
            if opened is not None:  # session/new's answer, fork's: its session's stream opens
                self._opened.add(opened)
                self.open_session(opened)
        elif seen is not None and seen.session_id is not None and seen.session_id in self.sessions:
            box = self.sessions[seen.session_id]
            if not box.attached and self._attaching(seen.session_id):
                box = self.stream  # a replay: where its answer will go (the module docstring)
        await box.put(message)

    def knows(self, session_id: str) -> bool:
        """Whether ``session_id`` is on the connection: the agent opened or attached it
        here, or an attach of it waits for its answer (a GET alone does not make it so)."""
        return session_id in self._opened or self._attaching(session_id)

    def _attached(self, session_id: str, *, ok: bool) -> None:
        if ok:
            self._opened.add(session_id)
        elif session_id not in self._opened and not self._attaching(session_id):
            box = self.sessions.pop(session_id, None)
            if box is not None:
                box.close()

    def _attaching(self, session_id: str) -> bool:
        """Whether an attach of ``session_id`` waits for its answer."""
        return (session_id, True) in self._routes.values()
