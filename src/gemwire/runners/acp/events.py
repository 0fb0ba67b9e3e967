"""A session's events in order, waiting for the turn that reads them."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence

import anyio

from gemwire.events import Event

__all__ = ("MAX_QUEUED_EVENTS", "EventQueue")

MAX_QUEUED_EVENTS = 1024
"""Events waiting for a slow consumer before the reader stops reading the agent."""


class EventQueue:
    """Events in order; ``wake`` tells the reader a consumer took some (it may read on)."""

    def __init__(self, wake: Callable[[], None]) -> None:
        self._items: deque[Event] = deque()
        self._changed: anyio.Event | None = None
        """Set when events come; made only while a consumer waits (one made a put was
        a tenth of a served event's CPU)."""
        self._wake = wake

    def __len__(self) -> int:
        return len(self._items)

    def put(self, events: Sequence[Event]) -> None:
        if events:
            self._items.extend(events)
            if self._changed is not None:
                self._changed.set()
                self._changed = None

    def take_all(self) -> list[Event]:
        items = list(self._items)
        self._items.clear()
        self._wake()
        return items

    def discard_through(self, last: Event | None) -> None:
        """Drop the events up to ``last`` (the same object) and ``last`` itself."""
        if any(item is last for item in self._items):
            while self._items.popleft() is not last:
                pass
            self._wake()

    async def get(self) -> Event:
        while not self._items:
            if self._changed is None:
                self._changed = anyio.Event()
            await self._changed.wait()
        event = self._items.popleft()
        if len(self._items) < MAX_QUEUED_EVENTS:
            self._wake()
        return event
