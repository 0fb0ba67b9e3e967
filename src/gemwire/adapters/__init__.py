"""gemwire behind other systems' interfaces: thin adapters over the runners, nothing more."""

from __future__ import annotations

from gemwire.adapters.response_provider import GeminiCliProvider, ProviderResult

__all__ = ("GeminiCliProvider", "ProviderResult")
