"""``gemwire serve``: agents behind an HTTP, SSE and WebSocket API (docs/server.md).

Needs the ``serve`` extra (Starlette, hypercorn with h2, wsproto). Never imported by ``import
gemwire``: the command line imports it when ``gemwire serve`` runs.

    from gemwire.server import ServerConfig, create_app
    app = create_app(ServerConfig(host="127.0.0.1", port=8765, token="...",
                                  roots=("/srv/work",), state_dir="/var/lib/gemwire"))
"""

from __future__ import annotations

from gemwire.server import _extra  # noqa: F401 - first: without the extra, what to install
from gemwire.server.app import create_app
from gemwire.server.config import ServerConfig

__all__ = ("ServerConfig", "create_app")
