"""How a Gemini subagent's file and the parent call that ran it name each other.

Gemini CLI 0.61.0 saves a subagent's session (e.g. ``codebase_investigator``) as
``chats/<parentSessionId>/<agentSessionId>.json[l]`` (``kind: "subagent"``), and records on
the parent's ``invoke_agent`` tool call the subagent's session id as ``agentId``. That id is
the link both ways: a parent's calls name their subagent files, and a subagent file's folder
names the parent session whose calls name it.

A session id is file content: the folder it names is looked up only when it is a plain folder
name (no separator, not ``.``/``..``, no NUL), so a hostile id never reaches another folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from gemwire.errors import SessionError
from gemwire.sessions._reading import is_dir, session_paths
from gemwire.sessions._summary import short_id_of
from gemwire.sessions.gemini._replay import SESSION_SUFFIXES, replay

__all__ = ("agent_calls", "parent_call", "subagent_paths")


class _Call(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    id: str
    agentId: str | UnsetType = UNSET


class _Calls(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What linking needs of a message: its tool calls' ids and ``agentId``s."""

    id: str
    type: Any = None
    toolCalls: list[_Call] | UnsetType | None = UNSET


def agent_calls(messages: Iterable[Any]) -> dict[str, str]:
    """``agentId`` -> the id of the call that ran that subagent."""
    calls = {}
    for message in messages:
        for call in getattr(message, "toolCalls", None) or ():
            if isinstance(call.agentId, str):
                calls[call.agentId] = call.id
    return calls


def parent_call(path: str | os.PathLike[str], session_id: str) -> tuple[str, str] | None:
    """(parent session id, call id) of the subagent session ``session_id`` saved at ``path``;
    ``None`` when no parent file in the folder above names it."""
    folder = Path(path).parent
    parent_id = folder.name
    try:
        entries = sorted(os.scandir(folder.parent), key=lambda e: e.name)
    except OSError:
        return None
    for entry in entries:
        if short_id_of(entry.name) != parent_id[:8] or is_dir(entry):
            continue
        try:
            replayed, _ = replay(Path(entry.path), summary=False, message_type=_Calls)
        except SessionError:  # a link that loops, say: not the parent
            continue
        if replayed.metadata.get("sessionId") != parent_id:
            continue
        call_id = agent_calls(replayed.messages).get(session_id)
        if call_id is not None:
            return parent_id, call_id
    return None


def _folder_name(name: str) -> bool:
    """Whether ``name`` names a folder right here, and nothing else.

    >>> [_folder_name(n) for n in ("1b3c-uuid", "../x", "/etc", "..", "", "a\\0b")]
    [True, False, False, False, False, False]
    """
    return name not in ("", ".", "..") and "\0" not in name and os.path.basename(name) == name


def subagent_paths(path: str, session_id: str | None, calls: dict[str, str]) -> dict[str, Path]:
    """The call id -> subagent file of every subagent the calls of the session ``session_id``
    saved at ``path`` ran (``calls`` as `agent_calls` gives them; files that exist)."""
    if session_id is None or not _folder_name(session_id):
        return {}
    files = {}
    for sub in session_paths(Path(path).parent / session_id, SESSION_SUFFIXES):
        stem = sub.name.removesuffix(".jsonl").removesuffix(".json")
        if stem in calls:
            files[calls[stem]] = sub
    return files
