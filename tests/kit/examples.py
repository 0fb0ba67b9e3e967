"""How many examples a property test runs: bounded in ``make test``, thorough on demand.

``make test`` loads the ``gemwire`` profile: no deadline and no "too slow" check (how long an
example takes on a shared machine says nothing about the code), and at most `BOUND`
examples a test, whatever its own ``@settings`` ask. A test's own count says how many the
property deserves: ``make test-thorough`` (``GEMWIRE_HYPOTHESIS=thorough``, a nightly-style
run) loads ``thorough``, which runs each test's own count, and `THOROUGH` for a test that
names none. A failure found either way is kept in ``.hypothesis/`` and replayed first.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

__all__ = ("BOUND", "THOROUGH", "thorough")

BOUND = 100
"""Examples a test runs at most in ``make test`` (Hypothesis' own default)."""
THOROUGH = 500
"""Examples of a test that names no count, in the thorough run."""

settings.register_profile("gemwire", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", settings.get_profile("gemwire"), max_examples=THOROUGH)
# Loaded on import (tests/conftest.py's pytest_plugins), before any test module is: a
# test's settings are made from the profile in force when its module is imported.
settings.load_profile(os.environ.get("GEMWIRE_HYPOTHESIS", "gemwire"))


def thorough() -> bool:
    """Whether this is the thorough run."""
    return settings.get_current_profile_name() == "thorough"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if thorough():
        return
    for item in items:
        test = getattr(item, "obj", None)
        # Hypothesis reads a test's settings from this attribute each time it runs it.
        own = getattr(test, "_hypothesis_internal_use_settings", None)
        if isinstance(own, settings) and own.max_examples > BOUND:
            test._hypothesis_internal_use_settings = settings(own, max_examples=BOUND)  # type: ignore[union-attr]
