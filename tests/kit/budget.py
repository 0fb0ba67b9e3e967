"""The suite's time budget, one test at a time: a test that takes over `LIMIT` seconds fails.

What counts is the test's own time: its call and the setup of its function-scoped fixtures
(a fresh agent, server or browser page is the test's cost). The setup of module- and
session-scoped fixtures is left out: one agent or server shared by a file's tests is paid
by whichever test comes first, and sharing is what keeps the suite inside its budget
(CONTRIBUTING.md, "Tests: the time budget"). pytest-timeout's 120 s (pyproject.toml) still
ends anything that hangs, shared setup included.
"""

from __future__ import annotations

import time
from collections.abc import Generator

import pytest

__all__ = ("LIMIT",)

LIMIT = 60.0
"""Seconds one test may take (CONTRIBUTING.md)."""

_OWN_SETUP = pytest.StashKey[float]()


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
    if call.when == "call" and report.passed:
        took = call.duration + item.stash.get(_OWN_SETUP, 0.0)
        if took > LIMIT:
            report.outcome = "failed"
            report.longrepr = (
                f"passed, but took {took:.1f} s (call and function-scoped fixtures), over the"
                f" {LIMIT:g} s one test may take: share what it starts, or split it"
                " (CONTRIBUTING.md, the time budget)"
            )
    return report
