"""Starlette, hypercorn and wsproto, from the ``serve`` extra: imported here first, so that
without them ``import gemwire.server`` says what to install instead of naming a missing
module."""

from __future__ import annotations

try:
    import hypercorn
    import starlette
    import wsproto
except ImportError as exc:  # pragma: no cover - the tests run with the extra installed
    raise ImportError(
        f"gemwire.server needs the [serve] extra ({exc.name} is missing): "
        "pip install 'gemwire[serve]'"
    ) from exc

__all__ = ("hypercorn", "starlette", "wsproto")
