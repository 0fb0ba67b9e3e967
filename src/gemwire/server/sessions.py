"""The live sessions of the server (`SessionManager`)."""

from __future__ import annotations

from gemwire.server.config import ServerConfig

__all__ = ("SessionManager",)


class SessionManager:
    """Owns every session of the server, live or stopped."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config

    async def drain(self) -> None:
        """End every turn, stream and agent (shutdown)."""
