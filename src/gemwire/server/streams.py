"""A session's envelopes to its subscribers (SSE, WebSocket), live and from the log.

Every envelope is in the log (`EventLog`) before any subscriber sees it. A subscriber
registers first, then reads the log from its ``after``, then takes what was published
meanwhile, skipping seqs it already sent: no gap, no duplicate. Each subscriber buffers at
most `SUBSCRIBER_BUFFER` envelopes and `SUBSCRIBER_BYTES` bytes of them; one that falls
further behind (a slow or stalled client) drops its buffer and reads on from the log when
it catches up. So a client that
never reads costs a bounded buffer, never growing memory, and never holds the agent back.
The log is read in a worker thread, from the nearest line whose offset it keeps: a client
catching up on a long log blocks no one, and reads it about once.
"""

from __future__ import annotations

from collections import deque

import anyio

from gemwire.server.store import EventLog

__all__ = ("LOG_BATCH", "SUBSCRIBER_BUFFER", "SUBSCRIBER_BYTES", "EventStream", "Subscription")

SUBSCRIBER_BUFFER = 1024
"""Envelopes buffered per subscriber; beyond, it reads from the log instead."""
SUBSCRIBER_BYTES = 4 << 20
"""Bytes of envelopes buffered per subscriber; beyond, it reads from the log instead (a
few large tool outputs would otherwise pin their count times their size)."""
LOG_BATCH = 1000
"""Envelopes read from the log at a time (fewer when they are over `store.READ_BYTES`)."""

Item = tuple[int, bytes]


class Subscription:
    """One subscriber: `next_batch` gives envelopes in seq order, exactly once each."""

    def __init__(self, stream: EventStream, after: int) -> None:
        self._stream = stream
        self.last = after
        """The seq of the last envelope given."""
        self._buffer: deque[Item] = deque()
        self._bytes = 0
        """Bytes of envelopes in ``_buffer``."""
        self._from_log = True
        self._changed = anyio.Event()
        self._poked = False
        """`poke` was called: `next_or_idle` returns ``None`` if nothing came meanwhile."""

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    @property
    def buffered_bytes(self) -> int:
        return self._bytes

    def offer(self, item: Item) -> None:
        if self._from_log:
            pass  # it will be read from the log
        elif (
            len(self._buffer) >= SUBSCRIBER_BUFFER or self._bytes + len(item[1]) > SUBSCRIBER_BYTES
        ):
            self._clear()
            self._from_log = True
        else:
            self._buffer.append(item)
            self._bytes += len(item[1])
        self._changed.set()

    def _clear(self) -> None:
        self._buffer.clear()
        self._bytes = 0

    def wake(self) -> None:
        self._changed.set()

    def poke(self) -> None:
        """Have a waiting `next_or_idle` return ``None`` (a stream's keep-alive is due): a
        timer calls it, so no wait needs a deadline of its own (one a wait cost more CPU
        than the rest of an event's way out)."""
        self._poked = True
        self._changed.set()

    async def next_batch(self) -> list[Item]:
        """The next envelopes; ``[]`` once the stream is closed and all were given.
        Safe to cancel (nothing is taken until it returns)."""
        items = await self._next(pokeable=False)
        assert items is not None
        return items

    async def next_or_idle(self) -> list[Item] | None:
        """`next_batch`, or ``None`` when `poke` came first."""
        return await self._next(pokeable=True)

    async def _next(self, *, pokeable: bool) -> list[Item] | None:
        while True:
            if self._changed.is_set():  # else the one made before is still unused
                self._changed = anyio.Event()
            if self._from_log:
                # Following live from here: what is published while the log is read is
                # buffered (the read skips it, or it skips what the read gave).
                self._from_log = False
                self._clear()
                try:
                    items = await anyio.to_thread.run_sync(
                        self._stream.log.read, self.last, LOG_BATCH
                    )
                except BaseException:
                    self._from_log = True  # cancelled: read it again next time
                    raise
                if items and items[-1][0] < self._stream.log.last_seq:
                    self._from_log = True  # more to read there
                    self._clear()
            else:
                items = [item for item in self._buffer if item[0] > self.last]
                self._clear()
            if items:
                self.last = items[-1][0]
                self._poked = False
                return items
            if self._stream.closed and not self._from_log:
                final = self._stream.final
                if final is not None and final[0] > self.last:
                    self.last = final[0]
                    return [final]
                return []
            if pokeable and self._poked:
                self._poked = False
                return None
            await self._changed.wait()


class EventStream:
    """The subscribers of one session; `publish` after the envelope is logged."""

    def __init__(self, log: EventLog) -> None:
        self.log = log
        self.closed = False
        self.final: Item | None = None
        """The envelope every subscription ends with, never logged (`end`)."""
        self._subscribers: set[Subscription] = set()

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)

    @property
    def buffered(self) -> int:
        """The most envelopes one subscriber holds (at most `SUBSCRIBER_BUFFER`)."""
        return max((s.buffered for s in self._subscribers), default=0)

    def subscribe(self, after: int) -> Subscription:
        """A subscriber from seq ``after`` on; `unsubscribe` it when done."""
        subscription = Subscription(self, after)
        self._subscribers.add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        self._subscribers.discard(subscription)

    def publish(self, seq: int, envelope: bytes) -> None:
        for subscription in self._subscribers:
            subscription.offer((seq, envelope))

    def close(self) -> None:
        """End every subscription once it has given what is logged."""
        self.closed = True
        for subscription in self._subscribers:
            subscription.wake()

    def end(self, seq: int, envelope: bytes) -> None:
        """Close, each subscription ending with ``envelope`` (not in the log: the log
        could not take it) once it has given what is logged."""
        self.final = (seq, envelope)
        self.close()

    def reopen(self) -> None:
        self.closed = False
