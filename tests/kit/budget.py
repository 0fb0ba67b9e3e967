"""The suite's time budget, one test at a time: a test that takes over `LIMIT` seconds fails.

What counts is the test's own time: its call and the setup of its function-scoped fixtures
(a fresh agent, server or browser page is the test's cost). The setup of module- and
session-scoped fixtures is left out: one agent or server shared by a file's tests is paid
by whichever test comes first, and sharing is what keeps the suite inside its budget
(CONTRIBUTING.md, "Tests: the time budget"). pytest-timeout's 120 s (pyproject.toml) still
ends anything that hangs, shared setup included. The thorough run (`kit.examples`) has no
limit: it runs each property test's own count of examples.

`LIMIT` is for the budget's machine, 2 idle cores. On a loaded one it scales with the load
(`allowed`: the load average per core, when over 1), and so does pytest-timeout's timeout,
so that a test that fits the budget does not fail because other work shares the machine.
"""

from __future__ import annotations

import os
import time
from collections.abc import Generator

import pytest

from kit.examples import thorough

__all__ = ("LIMIT", "allowed", "load")

LIMIT = 60.0
"""Seconds one test may take (CONTRIBUTING.md)."""

_OWN_SETUP = pytest.StashKey[float]()
_LOAD_AT_START = pytest.StashKey[float]()


def load() -> float:
    """The 1-minute load average per core (0 where the OS has none: Windows)."""
    if not hasattr(os, "getloadavg"):
        return 0.0
    return os.getloadavg()[0] / (os.cpu_count() or 1)


def allowed(busy: float) -> float:
    """The seconds a test may take at a load average per core of ``busy``: `LIMIT`, times
    that load when the machine is busier than its cores.

    >>> allowed(0.3), allowed(1.0), allowed(4.5)
    (60.0, 60.0, 270.0)
    """
    return LIMIT * max(1.0, busy)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    # Around pytest-timeout's own wrapper, which reads the test's timeout as it starts.
    busy = item.stash[_LOAD_AT_START] = load()
    if busy > 1.0:
        own = item.get_closest_marker("timeout")
        timeout = own.args[0] if own and own.args else item.config.getini("timeout")
        if timeout:
            item.add_marker(pytest.mark.timeout(float(timeout) * busy), append=False)
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(
    fixturedef: pytest.FixtureDef[object], request: pytest.FixtureRequest
) -> Generator[None, object, object]:
    # A fixture's own dependencies are set up before this hook runs for it, so each
    # fixture's time is counted once.
    start = time.perf_counter()
    try:
        return (yield)
    finally:
        if fixturedef.scope == "function" and isinstance(request.node, pytest.Item):
            stash = request.node.stash
            stash[_OWN_SETUP] = stash.get(_OWN_SETUP, 0.0) + time.perf_counter() - start


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if call.when == "call" and report.passed and not thorough():
        took = call.duration + item.stash.get(_OWN_SETUP, 0.0)
        busy = max(item.stash.get(_LOAD_AT_START, 0.0), load())
        if took > allowed(busy):
            report.outcome = "failed"
            report.longrepr = (
                f"passed, but took {took:.1f} s (call and function-scoped fixtures), over the"
                f" {allowed(busy):g} s one test may take (load {busy:.1f} a core): share"
                " what it starts, or split it (CONTRIBUTING.md, the time budget)"
            )
    return report
