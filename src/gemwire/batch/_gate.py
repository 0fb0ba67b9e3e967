"""One pause for the whole batch when the model's API says slow down."""

from __future__ import annotations

import time

import anyio

__all__ = ("RateGate",)


class RateGate:
    """Closed for a while after a 429: no task starts until it opens.

    Each 429 in a row doubles the pause (from ``first`` up to ``cap``), or waits what the
    API asked for if that is longer; a task that succeeds starts the doubling over.
    """

    def __init__(self, first: float, cap: float) -> None:
        self._first = first
        self._cap = cap
        self._streak = 0
        self._until = 0.0

    async def wait(self) -> None:
        # Polls the deadline: another 429 while waiting moves it later.
        while (left := self._until - time.monotonic()) > 0:  # noqa: ASYNC110
            await anyio.sleep(left)

    def close(self, asked: float | None) -> float:
        """Close the gate after a 429; the seconds it stays closed from now."""
        pause = min(self._cap, self._first * 2**self._streak)
        pause = max(pause, min(asked or 0.0, self._cap))
        self._streak += 1
        self._until = max(self._until, time.monotonic() + pause)
        return self._until - time.monotonic()

    def passed(self) -> None:
        self._streak = 0
