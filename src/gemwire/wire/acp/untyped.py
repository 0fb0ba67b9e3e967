"""What the ACP schema has that `gemwire.wire.acp` leaves raw on purpose, each with the reason.

The drift test (tests/unit/wire/test_acp_schema_drift.py) holds this list to the vendored
schema (tests/fixtures/acp/schema/): every method, capability and session update kind there is
typed in ``wire.acp`` or named here, and nothing named here is typed or gone. So this is the
honest backlog of what gemwire does not speak yet: empty for schema 1.21.0. Raw means: a method's messages reach the
caller as plain JSON (an agent's request for it is answered "method not found"), a capability
member is not read, an update kind arrives as an ``UnknownUpdate``.

>>> METHODS, CAPABILITIES, SESSION_UPDATES
({}, {}, {})
"""

from __future__ import annotations

__all__ = ("CAPABILITIES", "METHODS", "SESSION_UPDATES")

METHODS: dict[str, str] = {}
"""Schema methods without a name in `AGENT_METHODS` / `CLIENT_METHODS` / `PROTOCOL_METHODS`."""

CAPABILITIES: dict[str, str] = {}
"""Capability members (``<schema type>.<member>``) our capability types do not declare."""

SESSION_UPDATES: dict[str, str] = {}
"""``sessionUpdate`` kinds without a type in `SESSION_UPDATE_TYPES`."""
