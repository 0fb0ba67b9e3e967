"""Ending a tool call that will never report its result, as every reducer must: each call
started ends in exactly one `ToolCallFinished`."""

from __future__ import annotations

from gemwire._normalize.notices import notice
from gemwire.events import Event, ToolCallFinished, ToolError

__all__ = ("close_unreported",)


def close_unreported(
    agent: str,
    session_id: str | None,
    call_id: str,
    *,
    warning: str | None,
    error: ToolError | None = None,
) -> list[Event]:
    """The call ``cancelled`` (with ``error``, when why is known), after a notice saying
    ``warning``, if given."""
    events: list[Event] = [] if warning is None else [notice(agent, session_id, warning)]
    events.append(
        ToolCallFinished(
            agent=agent, session_id=session_id, call_id=call_id, status="cancelled", error=error
        )
    )
    return events
