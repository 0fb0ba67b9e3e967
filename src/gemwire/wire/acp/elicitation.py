"""Elicitation: ``elicitation/create`` (an agent asks the user for input, by a form or a URL)
and ``elicitation/complete`` (a URL elicitation is done).

Upstream's request is a union of modes and scopes over the same object; it is one struct
here, every mode's and scope's fields optional, so a mode gemwire does not know still
decodes (and is declined: the spec forbids rendering it as a known mode).

    >>> import msgspec
    >>> msgspec.json.decode(
    ...     b'{"sessionId":"s","mode":"url","message":"Sign in","elicitationId":"e1",'
    ...     b'"url":"https://example.com/login"}',
    ...     type=CreateElicitationRequest,
    ... ).url
    'https://example.com/login'
"""

from __future__ import annotations

from typing import Literal

from gemwire.wire.acp._base import AcpStruct, JsonValue
from gemwire.wire.jsonrpc import RequestId

__all__ = (
    "CompleteElicitationNotification",
    "CreateElicitationRequest",
    "CreateElicitationResponse",
    "ElicitationAction",
)


class CreateElicitationRequest(AcpStruct, frozen=True, kw_only=True):
    mode: str
    """``form``, ``url``, or a mode of a newer schema (declined)."""
    message: str = ""
    session_id: str | None = None
    """Session scope (else ``request_id``: a request outside any session)."""
    tool_call_id: str | None = None
    request_id: RequestId | None = None
    requested_schema: dict[str, JsonValue] | None = None
    """``form``: a flat JSON Schema object; its ``properties`` are the fields to ask."""
    elicitation_id: str | None = None
    """``url``: named again by ``elicitation/complete``."""
    url: str | None = None


ElicitationAction = Literal["accept", "decline", "cancel"]


class CreateElicitationResponse(AcpStruct, frozen=True, kw_only=True):
    action: ElicitationAction
    content: dict[str, JsonValue] | None = None
    """``accept`` of a form: the values, by field name."""


class CompleteElicitationNotification(AcpStruct, frozen=True, kw_only=True):
    elicitation_id: str
