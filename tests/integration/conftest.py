"""Tests that run real programs but no model turn: the pinned CLI's ``--version``, Node.js,
headless Chromium, fake agents. Unit tests need none of them."""
