"""A search index: the searchable texts of each session file, kept while the file stays as it was.

Searching reads every session's prompts, answers and tool calls; loading thousands of files
for that takes seconds, and most have not changed since the last search. `SearchIndex`
keeps one source's texts (prompt, answer, tool input, tool output: `Passage`), each file's
under its path and its stamp, (size, mtime_ns, inode): a file that differs in any of them
is read again, one that is gone is never looked up (search asks only for the files its
listing found) and dropped at the next save. A source says what its sessions' stamps are
(`SessionSource.stamp`): a file's is `stamp_file`; OpenCode's sessions share one database,
and each is stamped by its own rows' times (one session written to is one read again).

The index is bounded: a session file's passages are kept while their text is at most
`KEPT_TEXT` characters (nearly every session: prompts, answers, tool calls); a file with more
(a long tool output, an answer of hundreds of MB) is kept as a stamp alone and read again at
each search. So the index holds at most `KEPT_TEXT` characters a file, in practice the text of
the sessions; without the bound, one session with a 200 MB answer made a 200 MB index.

The index lives in gemwire's cache folder (``…/gemwire/search``), one file per agent and home,
written whole and renamed over the old one. One that cannot be read, is not one (corrupt,
another version, another home's) or cannot be written is ignored: the files are read.
"""

from __future__ import annotations

import hashlib
import os
from typing import Literal

import msgspec

from gemwire.protocol._undecodable import UNDECODABLE
from gemwire.sessions._index import cache_folder, stamp_of, write_cache

__all__ = ("KEPT_TEXT", "Field", "Passage", "SearchIndex", "Stamp", "stamp_file")

_VERSION = 2
"""Bump when what a `Passage` holds, or how it is taken from a session, changes."""

KEPT_TEXT = 512 << 10
"""Characters of passages a file's entry keeps at most (512 Ki): more, and the file is read at
each search instead. The largest sessions recorded (a 300 KB tool output) fit."""

Field = Literal["prompt", "answer", "tool input", "tool output"]

Stamp = tuple[int, ...]
"""(size, mtime_ns, inode) of a session file; what its source says changes with the session
for one kept otherwise (OpenCode's, in a database)."""


class Passage(msgspec.Struct, frozen=True, array_like=True):
    """One text of a session as searched: a prompt, an answer, a tool call's input or output."""

    field: Field
    text: str


class _Entry(msgspec.Struct, frozen=True, array_like=True):
    stamp: Stamp
    passages: list[Passage] | None
    """``None``: over `KEPT_TEXT`, read the file."""


class _Document(msgspec.Struct, frozen=True, kw_only=True):
    version: int
    home: str
    entries: dict[str, _Entry]


_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(_Document).decode


def stamp_file(path: str) -> Stamp | None:
    """The stamp of a session file, or ``None`` if there is none (gone, unreadable).

    >>> stamp_file("/nonexistent/session.jsonl") is None
    True
    """
    try:
        return stamp_of(os.stat(path))
    except (OSError, ValueError):
        return None


class SearchIndex:
    """The passages of one source's session files (an agent, under one home), by path."""

    def __init__(self, agent: str, home: str) -> None:
        self._home = f"{agent}:{os.path.realpath(home)}"
        key = self._home.encode(errors="surrogateescape")
        self.path = cache_folder("search") / f"{hashlib.sha256(key).hexdigest()[:32]}.msgpack"
        self._old = self._read()
        self._new: dict[str, _Entry] = {}
        self._changed = False

    def _read(self) -> dict[str, _Entry]:
        try:
            document = _decode(self.path.read_bytes())
        except (OSError, *UNDECODABLE):
            return {}
        if document.version != _VERSION or document.home != self._home:
            return {}
        return document.entries

    def get(self, path: str, stamp: Stamp) -> list[Passage] | None:
        """The passages kept for ``path`` if it still has this ``stamp``; ``None``: read it
        (changed, new, or over `KEPT_TEXT`)."""
        entry = self._old.get(path)
        if entry is None or entry.stamp != stamp:
            return None
        self._new[path] = entry
        return entry.passages

    def put(self, path: str, stamp: Stamp, passages: list[Passage]) -> None:
        try:
            path.encode()  # a name that is not UTF-8 cannot be stored: read it each time
        except UnicodeEncodeError:
            return
        size = sum(len(passage.text) for passage in passages)
        entry = _Entry(stamp, passages if size <= KEPT_TEXT else None)
        if self._new.get(path) != entry:  # else: over the bound, as it was
            self._new[path] = entry
            self._changed = True

    def save(self, *, complete: bool) -> None:
        """Write the index if it changed. ``complete``: every file of the home was looked at,
        so entries not looked at are files that are gone; else they are kept."""
        entries = self._new if complete else {**self._old, **self._new}
        if not self._changed and len(entries) == len(self._old):
            return
        document = _Document(version=_VERSION, home=self._home, entries=entries)
        write_cache(self.path, _encode(document), ".search-")
