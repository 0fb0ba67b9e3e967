"""A listing index: each session file's summary, kept while the file stays as it was.

Listing a project reads every session file in it; most have not changed since the last
listing. `ListingIndex` keeps one project folder's summaries (`SessionInfo`), each under
its file's name and (size, mtime_ns, inode): a file that differs in any of them is read
again. The index lives in gemwire's cache folder (``$XDG_CACHE_HOME/gemwire/listing``,
else ``~/.cache/gemwire/listing``, private to the user), never in the Gemini home, one file
per project folder, written whole to a temporary file and renamed over the old one (one that
a killed listing left is removed by a later write, once it is an hour old).

Only folders of `INDEXED_FROM` sessions or more are indexed. An index that cannot be read,
is not one (corrupt, another version, another folder's) or cannot be written is ignored:
the listing reads the files, as without one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import time
from pathlib import Path

import msgspec

from gemwire.protocol._undecodable import UNDECODABLE
from gemwire.sessions._summary import SessionInfo

__all__ = ("ListingIndex", "cache_folder", "stamp_of", "write_cache")

_VERSION = 1
"""Bump when `SessionInfo`, or what gemwire reads into it, changes: old indexes are ignored."""

INDEXED_FROM = 100
"""Sessions a folder needs before it gets an index: reading fewer files takes a few
milliseconds, and a short-lived home (a test's, the demo's) would leave its index behind."""

_STALE_AFTER = 3600.0  # seconds

Stamp = tuple[int, int, int]
"""(size, mtime_ns, inode) of a session file."""


class _Entry(msgspec.Struct, frozen=True, array_like=True):
    stamp: Stamp
    info: SessionInfo


class _Document(msgspec.Struct, frozen=True, kw_only=True):
    version: int
    folder: str
    entries: dict[str, _Entry]


_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(_Document).decode


def cache_folder(name: str) -> Path:
    """``$XDG_CACHE_HOME/gemwire/<name>``, else ``~/.cache/gemwire/<name>``."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG spec: a relative path is to be ignored
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gemwire" / name


def _is_text(*names: str) -> bool:
    """Whether file names can be stored: one that is not UTF-8 (surrogate escapes) cannot."""
    try:
        "".join(names).encode()
    except UnicodeEncodeError:
        return False
    return True


def stamp_of(stat: os.stat_result) -> Stamp:
    return (stat.st_size, stat.st_mtime_ns, stat.st_ino)


class ListingIndex:
    """The summaries of one ``chats`` folder's files, by their path relative to it."""

    def __init__(self, chats: str) -> None:
        self._folder = os.path.realpath(chats)
        name = hashlib.sha256(self._folder.encode(errors="surrogateescape")).hexdigest()[:32]
        self.path = cache_folder("listing") / f"{name}.msgpack"
        self._old = self._read()
        self._new: dict[str, _Entry] = {}
        self._changed = False

    def _read(self) -> dict[str, _Entry]:
        try:
            document = _decode(self.path.read_bytes())
        except (OSError, *UNDECODABLE):
            return {}
        if document.version != _VERSION or document.folder != self._folder:
            return {}
        return document.entries

    def get(self, name: str, stamp: Stamp) -> SessionInfo | None:
        """The summary kept for the file ``name`` if it still has this ``stamp``."""
        entry = self._old.get(name)
        if entry is None or entry.stamp != stamp:
            return None
        self._new[name] = entry
        return entry.info

    def put(self, name: str, stamp: Stamp, info: SessionInfo) -> None:
        if _is_text(name, info.path, info.project or "", self._folder):
            self._new[name] = _Entry(stamp, info)
            self._changed = True

    def save(self) -> None:
        """Write the index if it changed: the files looked at since it was read (entries not
        looked at are files that are gone)."""
        if len(self._new) < INDEXED_FROM or (
            not self._changed and len(self._new) == len(self._old)
        ):
            return
        document = _Document(version=_VERSION, folder=self._folder, entries=self._new)
        write_cache(self.path, _encode(document), ".listing-")


def write_cache(path: Path, data: bytes, prefix: str) -> None:
    """Write ``data`` to ``path`` whole or not at all: to a temporary file named ``prefix…``
    beside it, renamed over it. Best effort: a cache that cannot be written is ignored."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=prefix)
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(data)
            os.replace(temporary, path)
        except BaseException:  # Ctrl-C too: leave no temporary file behind
            os.unlink(temporary)
            raise
        _remove_stale_temporaries(path.parent, prefix)


def _remove_stale_temporaries(folder: Path, prefix: str) -> None:
    """Remove what a write killed midway (SIGKILL, or SIGTERM outside gemwire's handler)
    left behind: a temporary file an hour old is no other writer's."""
    cutoff = time.time() - _STALE_AFTER
    for temporary in folder.glob(f"{prefix}*"):
        with contextlib.suppress(OSError):
            if temporary.stat().st_mtime < cutoff:
                temporary.unlink()
