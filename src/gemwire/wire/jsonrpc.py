"""The JSON-RPC 2.0 envelope, as the specification names its members.

One `Message` type covers requests, notifications and responses: which one a line is
depends on which members are present, and absent differs from ``null`` here (a
``"result": null`` is a successful response), so every optional member defaults to
``UNSET``. ``params``, ``result`` and ``error`` stay raw JSON until the layer above
knows what type to decode them into.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

__all__ = (
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "ErrorObject",
    "Message",
    "RequestId",
)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

RequestId = int | str
"""The spec also allows ``null`` and fractions; no ACP peer uses them."""


class ErrorObject(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The ``error`` member of a failed response."""

    code: int
    message: str
    data: Any = None


class Message(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Any JSON-RPC 2.0 message (no batches: ACP sends one message per line)."""

    jsonrpc: str | UnsetType = UNSET
    id: RequestId | UnsetType | None = UNSET
    method: str | UnsetType = UNSET
    params: msgspec.Raw | UnsetType = UNSET
    result: msgspec.Raw | UnsetType = UNSET
    error: msgspec.Raw | UnsetType = UNSET
