"""OpenCode's saved sessions, exactly as upstream names them: rows of its SQLite database.

OpenCode 1.18.33 (the version pinned in clis/) keeps every session of every project in one
database, ``<data>/opencode/opencode.db`` (WAL mode). gemwire reads three tables:

- ``session`` — one row a session: its ``id`` (``ses_…``), the folder it ran in
  (``directory``), the session that started it (``parent_id``, a subagent's), its
  ``title`` and times (milliseconds since the epoch);
- ``message`` — one row a message of a session, its ``data`` a JSON `MessageData` (the
  user's prompt, or one model response with its tokens);
- ``part`` — one row a part of a message, its ``data`` a JSON `PartData`: ``text``,
  ``reasoning``, ``tool`` (a call and its `ToolState`), ``step-start`` / ``step-finish``,
  ``patch``, ``file``, …

`SessionRow` is the columns gemwire selects; a message's and a part's ``data`` are decoded
from their JSON, one Struct each with every kind's fields (``type`` or ``role`` says which
are set). `SCHEMA` names the tables and columns gemwire needs: a database without them is
of a schema gemwire does not know.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

__all__ = (
    "SCHEMA",
    "UPSTREAM_VERSION",
    "MessageData",
    "PartData",
    "SessionRow",
    "TokenCache",
    "Tokens",
    "ToolState",
)

UPSTREAM_VERSION = "OpenCode 1.18.33"

SCHEMA: dict[str, tuple[str, ...]] = {
    "session": ("id", "parent_id", "directory", "title", "version", "time_created", "time_updated"),
    "message": ("id", "session_id", "time_created", "data"),
    "part": ("id", "message_id", "session_id", "data"),
}
"""The tables gemwire reads and the columns it needs of each."""


class SessionRow(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A row of ``session`` (the columns of `SCHEMA`)."""

    id: str
    parent_id: str | None
    directory: str
    title: str
    version: str
    """OpenCode's version when the session was made."""
    time_created: int
    time_updated: int


class TokenCache(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    read: int = 0
    write: int = 0


class Tokens(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A response's tokens: ``input`` without the cached ones (``cache.read``) and those
    written to the cache (``cache.write``); ``output`` without the ``reasoning``."""

    input: int = 0
    output: int = 0
    reasoning: int = 0
    cache: TokenCache = TokenCache()
    total: int | UnsetType = UNSET


class MessageData(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A ``message`` row's ``data``: the user's (``role`` ``user``) or a model response
    (``assistant``: its model, tokens, cost, why it stopped, its error)."""

    role: str
    time: dict[str, int] | UnsetType = UNSET
    agent: str | UnsetType = UNSET
    model: Any = UNSET
    """``user``: the model asked for (``providerID``, ``modelID``)."""
    summary: Any = UNSET
    parentID: str | UnsetType = UNSET
    """``assistant``: the user message it answers."""
    mode: str | UnsetType = UNSET
    path: Any = UNSET
    cost: float | UnsetType = UNSET
    tokens: Tokens | UnsetType = UNSET
    modelID: str | UnsetType = UNSET
    providerID: str | UnsetType = UNSET
    finish: str | UnsetType = UNSET
    """``stop``, ``tool-calls``, …; absent when the response did not finish."""
    error: Any = UNSET
    """``{"name": "MessageAbortedError", "data": {...}}``, …"""


class ToolState(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A ``tool`` part's ``state``: ``pending``, ``running``, ``completed`` (its
    ``output``) or ``error`` (its ``error``)."""

    status: str
    input: dict[str, Any] = {}
    output: str | UnsetType = UNSET
    error: str | UnsetType = UNSET
    title: str | UnsetType = UNSET
    metadata: Any = UNSET
    """What the tool reports beyond its output: ``edit`` a ``filediff`` (``file``, the
    ``patch``), ``write`` the ``filepath`` and whether it ``exists``ed, ``bash`` the
    ``exit`` code, …"""
    time: dict[str, int] | UnsetType = UNSET


class PartData(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A ``part`` row's ``data``; ``type`` says which fields it has."""

    type: str
    text: str | UnsetType = UNSET
    """``text`` and ``reasoning``."""
    synthetic: bool | UnsetType = UNSET
    """``text`` OpenCode added itself, not the user's."""
    time: dict[str, int] | UnsetType = UNSET
    tool: str | UnsetType = UNSET
    """``tool``: the tool's name, the call's id and its state."""
    callID: str | UnsetType = UNSET
    state: ToolState | UnsetType = UNSET
    reason: str | UnsetType = UNSET
    """``step-finish``: why the step ended, its tokens and cost."""
    tokens: Tokens | UnsetType = UNSET
    cost: float | UnsetType = UNSET
