"""`Activity`: when an ACP endpoint connection is idle, for the server's idle timeout.

A connection is idle once no message has passed either way for the timeout while no turn
runs (a ``session/prompt`` the agent has not answered). Nothing else tells a server that
a client is gone: uvicorn's WebSockets send no pings, so a socket whose peer vanished
without a word (a laptop closed, a NAT that forgot it) stays open, and a Streamable HTTP
client may never ``DELETE``; its agent would run, and hold a connection slot, for ever.
Keep-alive comments are not messages. A turn keeps its connection, however long it runs
(a permission request waiting on the client included): the turn's own end, or the socket
failing under the agent's next message, ends it.

The clock is injected (`Clock`): tests move time by hand.

    >>> from gemwire.protocol.acp.remote import peek
    >>> now = [0.0]
    >>> activity = Activity(lambda: now[0])
    >>> activity.client_sent(peek(b'{"jsonrpc":"2.0","id":3,"method":"session/prompt"}'))
    >>> now[0] = 50.0
    >>> activity.idle_for() is None  # a turn runs
    True
    >>> activity.agent_sent(peek(b'{"jsonrpc":"2.0","id":3,"result":{}}'))
    >>> now[0] = 80.0
    >>> activity.idle_for()
    30.0
"""

from __future__ import annotations

from collections.abc import Callable

from gemwire.protocol.acp.remote import Peeked
from gemwire.wire.acp.methods import AGENT_METHODS

__all__ = ("Activity", "Clock")

Clock = Callable[[], float]
"""Seconds, monotonic (the event loop's: `anyio.current_time`)."""

_PROMPT = AGENT_METHODS["session_prompt"]


class Activity:
    """One connection's traffic: when it last carried a message, and its turns running."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._last = clock()
        self._turns: set[bytes] = set()  # the ids of session/prompt requests, as written

    @property
    def turn_running(self) -> bool:
        return bool(self._turns)

    def client_sent(self, seen: Peeked | None) -> None:
        """The client sent a message (``seen``: `peek`'s; ``None``: one not for the agent)."""
        self._last = self._clock()
        if seen is not None and seen.request and seen.method == _PROMPT:
            assert seen.key is not None
            self._turns.add(seen.key)

    def agent_sent(self, seen: Peeked | None) -> None:
        """The agent sent a message (``seen``: `peek`'s, needed only while a turn runs)."""
        self._last = self._clock()
        if seen is not None and seen.response:
            assert seen.key is not None
            self._turns.discard(seen.key)

    def idle_for(self) -> float | None:
        """Seconds since the last message; ``None`` while a turn runs."""
        return None if self._turns else self._clock() - self._last
