"""A port for a server that must be told its port up front (``--port N``, a documented
example's fixed one): free when asked, so that two runs of the suite side by side never
bind the same. A server that can print its own takes ``--port 0`` instead."""

from __future__ import annotations

import socket

__all__ = ("free_port",)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
