"""Reading what an agent left on disk without trusting it: every source reads through here.

Only a regular file of at most `MAX_SESSION_BYTES` is read: anything else named like a session
(a FIFO, a device, a socket, a folder, a huge file) is `NotRead`, which a source turns into a
`Problem` on it, never opened for reading in a way that could block or run without end.
Folders are enumerated, never built from what a file says. A folder a home lists its
sessions from that exists but cannot be listed (not a folder, no permission, a link that
loops) is noted, with why, in the source's ``unread`` (`folder_entries`): the commands warn
of it rather than say there are no sessions.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

from gemwire._portable import O_BINARY, O_CLOEXEC, O_NONBLOCK, not_regular
from gemwire.errors import SessionError, SessionNotFound

__all__ = (
    "MAX_SESSION_BYTES",
    "NotRead",
    "folder_entries",
    "is_dir",
    "open_session_file",
    "read_small_file",
    "session_entries",
    "session_paths",
)

MAX_SESSION_BYTES = 512 << 20
"""A session file larger than this (512 MiB) is a `Problem`, not read: loading holds about a
file's size in memory, and the largest sessions measured are a few tens of MB."""


_READ = os.O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_BINARY
"""How a session file is opened (``O_BINARY``: on Windows, no text mode, whose Ctrl-Z would end
a read and whose CRLF would become LF)."""


class NotRead(Exception):
    """Why a file named like a session is not read (the `Problem` on it)."""


def _check(info: os.stat_result, limit: int) -> None:
    if kind := not_regular(info.st_mode):
        raise NotRead(f"not a regular file ({kind}): not read")
    if info.st_size > limit:
        raise NotRead(f"{info.st_size:,} bytes, over the {limit:,}-byte limit: not read")


def open_session_file(path: Path, limit: int = MAX_SESSION_BYTES) -> BinaryIO:
    """``path`` open for reading if it is a regular file of at most ``limit`` bytes.

    Raises `NotRead` for anything else, `SessionNotFound` if there is no such file and
    `SessionError` if it cannot be opened. The type is checked before opening (opening a
    device can act on it; opening a FIFO blocks until a writer comes); O_NONBLOCK and the
    check again on the open file cover one swapped in between (a regular file reads the
    same with it).
    """
    try:
        _check(os.stat(path), limit)
        fd = os.open(path, _READ)
    except FileNotFoundError as exc:
        raise SessionNotFound(f"no session file at {path}") from exc
    except OSError as exc:
        raise SessionError(f"cannot read {path}: {exc.strerror}") from exc
    except ValueError as exc:  # a NUL in the path: no file can have that name
        raise SessionNotFound(f"no session file at {path}") from exc
    try:
        _check(os.fstat(fd), limit)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_small_file(path: Path, limit: int) -> bytes | None:
    """The bytes of a regular file of at most ``limit`` bytes; ``None`` for anything else
    (missing, unreadable, not a regular file, larger)."""
    try:
        with open_session_file(path, limit) as file:
            data: bytes = file.read(limit + 1)
    except (SessionError, NotRead, OSError):
        return None
    return data if len(data) <= limit else None  # it grew since it was opened


def is_dir(entry: os.DirEntry[str]) -> bool:
    """Whether ``entry`` is a folder (or a link to one); a link that loops or leads nowhere
    is not (`DirEntry.is_dir` raises for a loop)."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def folder_entries(
    folder: str | os.PathLike[str], unread: dict[str, str] | None = None
) -> list[os.DirEntry[str]]:
    """The entries of ``folder``, by name. None if there is no such folder; none if it
    cannot be listed either, and then why, in ``unread`` under its path."""
    try:
        return sorted(os.scandir(folder), key=lambda e: e.name)
    except FileNotFoundError:
        return []
    except OSError as exc:
        if unread is not None:
            unread[os.fspath(folder)] = exc.strerror or str(exc)
        return []
    except ValueError:  # a NUL in the path: no such folder
        return []


def session_entries(
    folder: str, suffixes: tuple[str, ...], unread: dict[str, str] | None = None
) -> list[os.DirEntry[str]]:
    """The entries of ``folder`` named like session files (by ``suffixes``), by name.

    Not folders; whether the others can be read is up to reading them (a FIFO or a device
    becomes a `Problem` on it, a link loop is left out). A folder that cannot be listed
    has none (and is noted in ``unread``: `folder_entries`).
    """
    entries = folder_entries(folder, unread)
    return [e for e in entries if e.name.endswith(suffixes) and not is_dir(e)]


def session_paths(
    folder: Path, suffixes: tuple[str, ...], unread: dict[str, str] | None = None
) -> list[Path]:
    """`session_entries` as paths."""
    return [Path(entry.path) for entry in session_entries(str(folder), suffixes, unread)]
