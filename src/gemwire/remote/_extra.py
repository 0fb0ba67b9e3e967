"""httpx, from the ``remote`` extra: imported here first, so that without it
``import gemwire.remote`` says what to install instead of naming a missing module."""

from __future__ import annotations

try:
    import httpx
except ImportError as exc:  # pragma: no cover - the tests run with the extra installed
    raise ImportError(
        "gemwire.remote needs the [remote] extra: pip install 'gemwire[remote]'"
    ) from exc

__all__ = ("httpx",)
