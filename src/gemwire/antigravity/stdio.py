"""The adapter's standard input and output, as the event loop's non-blocking pipes.

`claim_stdio` keeps the protocol's channel for itself: the ACP messages go to a duplicate of
the original stdout, and fd 1 then points at stderr, so nothing else in the process (a
``print`` in the SDK, a child that inherits fd 1) can write into the JSON-RPC stream.
Reading and writing wait on the event loop (`anyio.wait_readable`), never in a thread: a
cancelled read leaves nothing behind that keeps the process alive.
"""

from __future__ import annotations

import os
import sys

import anyio

__all__ = ("Stdio", "claim_stdio")

_CHUNK = 1 << 16


if sys.platform != "win32":

    def _non_blocking(fd: int) -> None:
        os.set_blocking(fd, False)

else:  # the event loop waits on pipes only on POSIX; the harness is built for Linux

    def _non_blocking(fd: int) -> None:
        raise NotImplementedError("gemwire agent antigravity runs on Linux")


class Stdio:
    def __init__(self, read_fd: int, write_fd: int) -> None:
        self._read_fd = read_fd
        self._write_fd = write_fd
        self._write_lock = anyio.Lock()
        _non_blocking(read_fd)
        _non_blocking(write_fd)

    async def read(self) -> bytes:
        """The next bytes the client wrote; ``b""`` once it has closed its end."""
        while True:
            try:
                return os.read(self._read_fd, _CHUNK)
            except BlockingIOError:
                await anyio.wait_readable(self._read_fd)

    async def write(self, data: bytes) -> None:
        """All of ``data``, one message at a time (a message is never interleaved)."""
        async with self._write_lock:
            view = memoryview(data)
            while view:
                try:
                    written = os.write(self._write_fd, view)
                except BlockingIOError:
                    await anyio.wait_writable(self._write_fd)
                    continue
                view = view[written:]


def claim_stdio() -> Stdio:
    """The protocol's channel on the original stdin and stdout (see the module docs)."""
    sys.stdout.flush()
    protocol_out = os.dup(1)
    os.dup2(2, 1)
    return Stdio(0, protocol_out)
