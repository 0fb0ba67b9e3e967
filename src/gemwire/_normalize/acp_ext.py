"""Extension notifications an ACP agent sends (methods starting ``_``) that have events:
``_auth/status_update`` becomes ``auth_status``. Any other, or one that does not decode,
stays an ``unknown`` event with its raw params (the caller's fallback).

    >>> agent_notification("acp:claude", "_auth/status_update",
    ...     '{"authStatus": {"kind": "api_key", "label": "API key", "detail": "env"}}')
    AuthStatus(agent='acp:claude', kind='api_key', label='API key', detail='env')
    >>> agent_notification("acp:claude", "_zed/other", "{}") is None
    True
"""

from __future__ import annotations

import msgspec

from gemwire.events import AuthStatus, Event
from gemwire.wire import acp

__all__ = ("agent_notification",)


def agent_notification(agent: str, method: str, params: str | None) -> Event | None:
    """The event of an extension notification gemwire knows; ``None`` otherwise."""
    if method != "_auth/status_update":
        return None
    try:
        update = msgspec.json.decode(params or "null", type=acp.AuthStatusNotification)
    except msgspec.DecodeError:
        return None
    status = update.auth_status
    return AuthStatus(agent=agent, kind=status.kind, label=status.label, detail=status.detail)
