"""``fs/read_text_file`` and ``fs/write_text_file``: the agent reads and writes through the client."""

from __future__ import annotations

from gemwire.wire.acp._base import AcpStruct

__all__ = (
    "ReadTextFileRequest",
    "ReadTextFileResponse",
    "WriteTextFileRequest",
    "WriteTextFileResponse",
)


class ReadTextFileRequest(AcpStruct, frozen=True, kw_only=True):
    session_id: str
    path: str
    line: int | None = None
    """1-based first line."""
    limit: int | None = None
    """At most this many lines."""


class ReadTextFileResponse(AcpStruct, frozen=True, kw_only=True):
    content: str


class WriteTextFileRequest(AcpStruct, frozen=True, kw_only=True):
    session_id: str
    path: str
    content: str


class WriteTextFileResponse(AcpStruct, frozen=True, kw_only=True):
    """``fs/write_text_file``'s answer: empty (but for ``_meta``)."""
