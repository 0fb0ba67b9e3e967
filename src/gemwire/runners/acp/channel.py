"""The seam under the ACP client: `AgentChannel`, what carries JSON-RPC to and from an agent.

`AcpClient` reads and writes the agent's messages only through a channel (as an httpx
client through its transport), so the same client drives an agent process
(`ProcessChannel`, the default), an agent object in this process (`memory_channel_pair`)
or a remote ACP endpoint (`WebSocketChannel`, `StreamableHttpChannel`: `remote_channel`).
A channel says how what it receives is framed:
``"lines"`` for a byte stream of newline-delimited JSON (a pipe), ``"messages"`` for one
whole JSON-RPC message per `receive` (a WebSocket frame, an in-memory queue). What it
cannot know is ``None``: a remote agent has no stderr tail and no exit code, but may
say why it closed.

    >>> async def demo() -> list[bytes]:
    ...     client, agent = memory_channel_pair()
    ...     async with client, agent:
    ...         await client.send(b'{"jsonrpc":"2.0","method":"hello"}\\n')
    ...         got = await agent.receive()
    ...         await agent.close(0, reason="done")
    ...         return [got, await client.receive(), client.close_reason.encode()]
    >>> anyio.run(demo)
    [b'{"jsonrpc":"2.0","method":"hello"}', b'', b'done']
"""

from __future__ import annotations

import contextlib
from typing import Literal, Protocol, Self

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

__all__ = (
    "CLOSE_GRACE",
    "MEMORY_BUFFER",
    "AgentChannel",
    "Framing",
    "MemoryChannel",
    "memory_channel_pair",
)

CLOSE_GRACE = 2.0
"""Seconds an agent has to end once its output ended or the client closed its side."""

Framing = Literal["lines", "messages"]
"""How what a channel receives is cut: a byte stream of JSON lines, or whole messages."""

MEMORY_BUFFER = 64
"""Messages an in-memory channel holds before its sender waits (the back-pressure a
pipe gives)."""


class AgentChannel(Protocol):
    """What carries an agent's JSON-RPC; the client opens it with ``async with`` and
    closes it. ``send`` is called by one task at a time."""

    @property
    def framing(self) -> Framing: ...

    async def send(self, data: bytes) -> None:
        """Send one JSON-RPC message (``data`` ends with a newline). Never raises
        because the agent is gone: its end shows as the end of `receive`."""
        ...

    async def receive(self) -> bytes:
        """The next chunk (``"lines"``) or message (``"messages"``; an empty frame is
        skipped, never returned); ``b""`` once the agent's side ended, for good."""
        ...

    async def close(self, grace: float) -> None:
        """Ask the agent to end (close our side), give it ``grace`` seconds, then end it."""
        ...

    @property
    def stderr_tail(self) -> str | None:
        """The agent's last lines on stderr, secrets masked; ``None`` without one."""
        ...

    @property
    def exit_code(self) -> int | None:
        """The agent process's exit status once it exited; ``None`` without one."""
        ...

    @property
    def close_reason(self) -> str | None:
        """Why the other side closed, if it said."""
        ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, *exc_info: object) -> None: ...


class _Link:
    """What the two ends of a memory pair share: who closed, and why."""

    def __init__(self) -> None:
        self.closed = {0: anyio.Event(), 1: anyio.Event()}
        self.reason: dict[int, str | None] = {0: None, 1: None}


class MemoryChannel:
    """One end of an in-memory pair (`memory_channel_pair`): whole messages, no process.

    The client uses one end; an agent running in this process (or a test's scripted
    agent) the other, with the same methods. ``close`` may give a reason, which the other
    end reads as its `close_reason`.
    """

    framing: Framing = "messages"

    def __init__(
        self,
        send_stream: MemoryObjectSendStream[bytes],
        receive_stream: MemoryObjectReceiveStream[bytes],
        link: _Link,
        side: int,
    ) -> None:
        self._send = send_stream
        self._receive = receive_stream
        self._link = link
        self._side = side

    @property
    def stderr_tail(self) -> str | None:
        return None

    @property
    def exit_code(self) -> int | None:
        return None

    @property
    def close_reason(self) -> str | None:
        return self._link.reason[1 - self._side]

    async def send(self, data: bytes) -> None:
        message = data[:-1] if data.endswith(b"\n") else data
        # The other end is gone: our receive says so.
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            await self._send.send(message)

    async def receive(self) -> bytes:
        try:
            while True:
                message = await self._receive.receive()
                if message:  # an empty message is no message, and b"" means the end
                    return message
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return b""

    async def close(self, grace: float, *, reason: str | None = None) -> None:
        """Close this side (the other end's `receive` ends, its `close_reason` is
        ``reason``); wait up to ``grace`` seconds for the other end to close too, then
        stop receiving."""
        link = self._link
        if not link.closed[self._side].is_set():
            link.reason[self._side] = reason
            link.closed[self._side].set()
        self._send.close()
        with anyio.move_on_after(grace):
            await link.closed[1 - self._side].wait()
        self._receive.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if not self._link.closed[self._side].is_set():
            self._link.closed[self._side].set()
        self._send.close()
        self._receive.close()


def memory_channel_pair(buffer: int = MEMORY_BUFFER) -> tuple[MemoryChannel, MemoryChannel]:
    """Two connected ends: give the first to `AcpClient`, serve the agent on the second."""
    to_agent, agent_inbox = anyio.create_memory_object_stream[bytes](buffer)
    to_client, client_inbox = anyio.create_memory_object_stream[bytes](buffer)
    link = _Link()
    return (
        MemoryChannel(to_agent, client_inbox, link, 0),
        MemoryChannel(to_client, agent_inbox, link, 1),
    )
