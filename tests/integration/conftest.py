"""Tests that run real programs but no model turn: the pinned CLI's ``--version``, Node.js,
headless Chromium, fake agents. Unit tests need none of them."""

from __future__ import annotations

from materialized import materialize

__all__ = ("materialize",)
