"""Reading a file a batch is pointed at without trusting what it is: `read_regular`.

A tasks file or an output folder's ``results.jsonl`` may be named by a server's client, or
replaced by an agent working beside it: a FIFO would block the reader until a writer comes
(for ever, holding a worker thread), a device would never end. Only a regular file of at
most a given size is read.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from gemwire._portable import O_BINARY, O_CLOEXEC, O_NONBLOCK, not_regular

__all__ = ("read_regular",)


def _check(info: os.stat_result, path: Path, limit: int) -> None:
    if kind := not_regular(info.st_mode):
        raise OSError(errno.EINVAL, f"not a regular file ({kind})", str(path))
    if info.st_size > limit:
        message = f"{info.st_size:,} bytes, over the {limit:,}-byte limit"
        raise OSError(errno.EFBIG, message, str(path))


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes, else
    `OSError` (``FileNotFoundError`` for none; ``strerror`` says what it is instead).

    The type is checked before opening (opening a device can act on it) and again on the
    open file, opened non-blocking: a FIFO swapped in between is refused, never waited on.
    """
    _check(os.stat(path), path, limit)
    fd = os.open(path, os.O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_BINARY)
    with os.fdopen(fd, "rb") as file:
        _check(os.fstat(fd), path, limit)
        return file.read(limit + 1)[:limit]
