"""`gemwire.remote`: drive agents on a `gemwire serve` server with the local API's shapes.

`connect` gives a `RemoteServer`; its sessions (`RemoteSession`) take prompts as
`AcpSession` does, and each turn (`RemoteTurn`) yields the same `gemwire.events` objects,
ending with exactly one ``turn_completed``. Permission requests go to the same
`PermissionHandler` callbacks. A dropped event stream is reopened where it left off
(`Reconnect`). Needs the ``remote`` extra: ``pip install 'gemwire[remote]'``.
"""

from __future__ import annotations

from gemwire.remote.api import Reconnect
from gemwire.remote.models import RemoteAgent, RemoteSessionInfo
from gemwire.remote.server import RemoteServer, connect
from gemwire.remote.session import RemoteSession
from gemwire.remote.turn import RemoteTurn

__all__ = (
    "Reconnect",
    "RemoteAgent",
    "RemoteServer",
    "RemoteSession",
    "RemoteSessionInfo",
    "RemoteTurn",
    "connect",
)
