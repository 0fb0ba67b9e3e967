"""``session/request_permission``: the agent asks, the client picks one of its options."""

from __future__ import annotations

from typing import Literal

from gemwire.wire.acp._base import AcpStruct
from gemwire.wire.acp.tool_calls import ToolCallUpdate

__all__ = (
    "CancelledPermissionOutcome",
    "PermissionOption",
    "RequestPermissionOutcome",
    "RequestPermissionRequest",
    "RequestPermissionResponse",
    "SelectedPermissionOutcome",
)


class PermissionOption(AcpStruct, frozen=True, kw_only=True):
    option_id: str
    name: str
    kind: Literal["allow_once", "allow_always", "reject_once", "reject_always"] | str


class RequestPermissionRequest(AcpStruct, frozen=True, kw_only=True):
    session_id: str
    tool_call: ToolCallUpdate
    options: list[PermissionOption]


class _Outcome(AcpStruct, frozen=True, kw_only=True, tag_field="outcome"):
    pass


class SelectedPermissionOutcome(_Outcome, frozen=True, kw_only=True, tag="selected"):
    option_id: str


class CancelledPermissionOutcome(_Outcome, frozen=True, kw_only=True, tag="cancelled"):
    pass


RequestPermissionOutcome = SelectedPermissionOutcome | CancelledPermissionOutcome


class RequestPermissionResponse(AcpStruct, frozen=True, kw_only=True):
    outcome: RequestPermissionOutcome
