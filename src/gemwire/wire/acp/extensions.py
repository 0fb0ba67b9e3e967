"""Extension methods (names starting ``_``) that today's agents send and gemwire reads; not
in the ACP schema, so not in its drift test.

``_auth/status_update``: claude-agent-acp (0.101.0, its ``auth-status`` module) and codex-acp
2.x push whose credentials the agent runs on, when it first knows and whenever it changes;
connection-scoped, no answer expected.
"""

from __future__ import annotations

from gemwire.wire.acp._base import AcpStruct

__all__ = ("EXTENSION_NOTIFICATIONS", "AuthStatus", "AuthStatusNotification")


class AuthStatus(AcpStruct, frozen=True, kw_only=True):
    kind: str
    """``account``, ``api_key``, ``gateway``, ``external``, ``none`` (logged out), or newer."""
    label: str | None = None
    detail: str | None = None


class AuthStatusNotification(AcpStruct, frozen=True, kw_only=True):
    """``_auth/status_update`` params."""

    auth_status: AuthStatus


EXTENSION_NOTIFICATIONS: dict[str, type[AcpStruct]] = {
    "_auth/status_update": AuthStatusNotification,
}
"""The type of each extension notification gemwire reads, by method."""
