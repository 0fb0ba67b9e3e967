"""`SessionInfo`: a saved session summarized for listing, the same for every agent's source.

The listing index (`gemwire.sessions._index`) stores these as they are: a field added here
needs a default (an older index lacks it), and a change of meaning bumps the index version.
"""

from __future__ import annotations

import os
from typing import Literal

import msgspec

from gemwire.wire.gemini_session import SESSION_FILE_PREFIX

__all__ = ("Format", "Kind", "SessionInfo", "json_safe", "short_id_of")

Format = Literal["json", "jsonl", "sqlite"]
Kind = Literal["main", "subagent"]


def short_id_of(file_name: str) -> str | None:
    """The 8-character id in Gemini's ``session-<time>-<id8>.json[l]`` (its cleanup matches
    on it); ``None`` for any other name.

    >>> short_id_of("session-2026-11-25T10-00-1b3c5d7e.jsonl"), short_id_of("notes.jsonl")
    ('1b3c5d7e', None)
    """
    if not file_name.startswith(SESSION_FILE_PREFIX):
        return None
    stem = file_name.removesuffix(".jsonl").removesuffix(".json")
    if stem == file_name:
        return None
    tail = stem.rsplit("-", 1)[-1]
    return tail if len(tail) == 8 and tail.isascii() and tail.isalnum() else None


class SessionInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A session file, summarized without loading its messages.

    ``resumable`` is the agent's own verdict on this file; for Gemini, whether
    ``gemini --resume`` lists it (a main session with a session id and at least one real
    prompt or model message with substance). Files that are not, e.g. the stubs a resume
    leaves behind, are deleted by Gemini's retention cleanup together with every file sharing
    their ``short_id``. ``index`` is the number ``gemini --resume <n>`` takes; set by
    `GeminiHome.sessions`. ``messages`` counts the messages of the final conversation (after
    upserts and rewinds). ``agent`` names the source that listed it (``gemini``, …).
    """

    id: str | None
    path: str
    project: str | None
    format: Format
    kind: Kind
    start_time: str | None
    last_updated: str | None
    summary: str | None
    first_prompt: str | None
    messages: int
    resumable: bool
    problems: int = 0
    index: int | None = None
    parent_id: str | None = None
    subagents: list[SessionInfo] = []
    agent: str = "gemini"

    @property
    def short_id(self) -> str | None:
        return short_id_of(os.path.basename(self.path))


def json_safe(info: SessionInfo) -> SessionInfo:
    r"""``info`` as JSON text can carry it (``gemwire sessions list --json``, the server's
    listing): a file name that is not UTF-8 has its bad bytes made U+FFFD.

    >>> info = SessionInfo(id="1", path="/h/s\udcff.jsonl", project=None, format="jsonl",
    ...     kind="main", start_time=None, last_updated=None, summary=None, first_prompt=None,
    ...     messages=0, resumable=False)
    >>> json_safe(info).path == "/h/s\ufffd.jsonl"
    True
    """
    path = info.path.encode(errors="surrogateescape").decode(errors="replace")
    subagents = [json_safe(sub) for sub in info.subagents]
    return msgspec.structs.replace(info, path=path, subagents=subagents)
