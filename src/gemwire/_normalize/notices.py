"""The `Notice` every reducer makes: most say, as gemwire, that something was skipped or odd."""

from __future__ import annotations

from typing import Literal

from gemwire.events import Notice

__all__ = ("notice",)


def notice(
    agent: str,
    session_id: str | None,
    message: str,
    *,
    severity: Literal["info", "warning", "error"] = "warning",
    source: Literal["upstream", "stderr", "gemwire"] = "gemwire",
) -> Notice:
    return Notice(
        agent=agent, session_id=session_id, severity=severity, message=message, source=source
    )
