"""Answering an agent's ``session/request_permission``: a callback for interactive hosts,
presets for headless ones.

A `PermissionHandler` gets a `PermissionRequest` and returns the ``option_id`` of one of
the options the agent offered, or ``None`` to answer ``cancelled``. Whatever a handler
returns, gemwire only ever sends an option the agent offered: an id that is not among
them (or a handler that raises) is treated as a denial.

    async def ask(request: PermissionRequest) -> str | None:
        print(request.title)
        for option in request.options:
            print(f"  {option.option_id}: {option.name}")
        return input("choose: ").strip() or None

The presets allow tool calls by ACP tool kind and deny the rest:

| preset  | allows                                       |
|---------|----------------------------------------------|
| `deny`  | nothing (the headless default)               |
| `reads` | `read`, `search`                             |
| `edits` | `read`, `search`, `edit`, `delete`, `move`   |
| `all`   | everything, `execute` and `fetch` included   |

Allowing picks an ``allow_once`` option (``allow_always`` only when there is none, or
when asked with ``always=True``); denying picks ``reject_once``, else ``reject_always``,
else answers ``cancelled`` — never an option id the agent did not offer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Literal

import msgspec

from gemwire.events import PermissionOption
from gemwire.wire import acp

__all__ = (
    "PERMISSION_PRESETS",
    "PermissionHandler",
    "PermissionPreset",
    "PermissionRequest",
    "choose_option",
    "permission_preset",
)


class PermissionRequest(msgspec.Struct, frozen=True, kw_only=True):
    """What an agent asks permission for, as a host shows it to a person."""

    request_id: str
    session_id: str
    call_id: str
    title: str
    kind: str
    """The tool call's ACP kind (``edit``, ``execute``, ...); ``other`` when not given."""
    options: list[PermissionOption]
    tool_call: acp.ToolCallUpdate
    """Everything the agent sent about the call: diffs, locations, raw input."""
    diff: str | None = None
    """The proposed change as a unified diff (the call's diffs as known), as the
    ``permission_requested`` event has it; secrets masked."""
    content: str | None = None
    """The call's text content as known; secrets masked."""


PermissionHandler = Callable[[PermissionRequest], Awaitable[str | None]]
"""Returns the chosen ``option_id``, or ``None`` to answer ``cancelled``."""

PermissionPreset = Literal["deny", "reads", "edits", "all"]

_READS = frozenset({"read", "search"})
PERMISSION_PRESETS: dict[str, frozenset[str] | None] = {
    "deny": frozenset(),
    "reads": _READS,
    "edits": _READS | {"edit", "delete", "move"},
    "all": None,
}
"""The tool kinds each preset allows (``None``: all)."""


def choose_option(
    options: Sequence[PermissionOption], *, allow: bool, always: bool = False
) -> str | None:
    """The offered option that allows (or denies) once, by preference; ``None`` if the
    agent offered none of that sort (answer ``cancelled`` then).

    >>> offered = [
    ...     PermissionOption(option_id="proceed_always", name="Always", kind="allow_always"),
    ...     PermissionOption(option_id="proceed_once", name="Allow", kind="allow_once"),
    ...     PermissionOption(option_id="cancel", name="Reject", kind="reject_once"),
    ... ]
    >>> choose_option(offered, allow=True), choose_option(offered, allow=False)
    ('proceed_once', 'cancel')
    >>> choose_option(offered, allow=True, always=True)
    'proceed_always'
    """
    if allow:
        order = ("allow_always", "allow_once") if always else ("allow_once", "allow_always")
    else:
        order = ("reject_once", "reject_always")
    for kind in order:
        for option in options:
            if option.kind == kind:
                return option.option_id
    return None


def permission_preset(preset: PermissionPreset, *, always: bool = False) -> PermissionHandler:
    """A handler that allows the kinds of `PERMISSION_PRESETS` ``[preset]`` and denies
    the rest; ``always=True`` prefers ``allow_always`` options."""
    if preset not in PERMISSION_PRESETS:
        raise ValueError(f"unknown permission preset {preset!r}; one of {list(PERMISSION_PRESETS)}")
    kinds = PERMISSION_PRESETS[preset]

    async def decide(request: PermissionRequest) -> str | None:
        allow = kinds is None or request.kind in kinds
        return choose_option(request.options, allow=allow, always=always)

    return decide
