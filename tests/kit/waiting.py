"""The one "eventually": wait until a condition holds, polled, for what another thread or
process does (a server's thread, whose anyio events belong to its own loop). Where an
event of the test's own loop can be awaited, await it instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio

__all__ = ("TIMEOUT", "eventually", "eventually_blocking")

TIMEOUT = 20.0
"""Seconds before giving up: generous, as a loaded machine is slow; a test that passes
never waits it out."""


async def eventually(done: Callable[[], bool]) -> None:
    """Wait until ``done()`` holds; fails after `TIMEOUT` seconds (for another limit, wrap
    the call in ``anyio.fail_after``)."""
    with anyio.fail_after(TIMEOUT):
        while not done():  # noqa: ASYNC110 - state of another thread
            await anyio.sleep(0.01)


def eventually_blocking(done: Callable[[], bool], timeout: float = TIMEOUT) -> None:
    """`eventually` for a synchronous test (it blocks its thread)."""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"not done after {timeout:g} s"
        time.sleep(0.01)
