"""`ServerConfig`: everything `gemwire serve` is started with, frozen.

The command line (``gemwire serve``) builds it once the socket is bound, so ``port`` is
the real port even for ``--port 0``; the app (`create_app`) only reads it.

    >>> config = ServerConfig(host="127.0.0.1", port=8765, token="t0k", roots=("/srv",),
    ...                       state_dir="/var/lib/gemwire")
    >>> config.url
    'http://127.0.0.1:8765'
    >>> sorted(config.allowed_origins())[:2]
    ['http://127.0.0.1:8765', 'http://localhost:8765']
    >>> config.loopback, config.wildcard
    (True, False)
"""

from __future__ import annotations

import ipaddress
import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

import msgspec

from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES

__all__ = (
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_PERMISSION_TIMEOUT",
    "DEFAULT_PORT",
    "MAX_BODY_BYTES",
    "MAX_HEAD_BYTES",
    "PERMISSION_GRACE",
    "ServerConfig",
    "default_state_dir",
    "is_loopback",
)

DEFAULT_PORT = 8765
DEFAULT_MAX_SESSIONS = 32
DEFAULT_IDLE_TIMEOUT = 3600.0
"""Seconds a session may sit without a turn before its agent is stopped (``stopped``)."""
DEFAULT_PERMISSION_TIMEOUT = 300.0
"""Seconds a permission request waits for a subscribed client's answer, then is denied."""
PERMISSION_GRACE = 10.0
"""Seconds a waiting permission request outlives its last subscriber: a page reloaded, or a
stream reconnecting, comes back to it still open; then, with nobody back, it is denied."""
MAX_HEAD_BYTES = 64 * 1024
"""A request head larger than this is refused: 431 on HTTP/1.1 (hypercorn, `run`), the
connection ended on HTTP/2 (the header list size it announces); `security` checks it too."""
MAX_BODY_BYTES = 1024 * 1024
"""A request body larger than this is refused with 413."""

_LOOPBACK_NAMES = frozenset({"localhost", "localhost."})
_WILDCARDS = frozenset({"0.0.0.0", "::", ""})


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address or ``localhost``.

    >>> [is_loopback(h) for h in ("127.0.0.1", "::1", "localhost", "0.0.0.0", "10.0.0.2")]
    [True, True, True, False, False]
    """
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


MIN_TOKEN_CHARS = 16
"""The shortest token a server bound beyond loopback takes."""


def weak_token(token: str) -> str | None:
    """Why ``token`` is too weak to guard a server others can reach; ``None`` if it is not.

    >>> weak_token("  "), weak_token("aaaaaaaaaaaaaaaaaaaa"), weak_token("Zq3-v9PmX_t2rLk8wE5y")
    ('with a token of 2 characters (at least 16)', 'with a token of one character repeated', None)
    """
    if len(token) < MIN_TOKEN_CHARS:
        return f"with a token of {len(token)} characters (at least {MIN_TOKEN_CHARS})"
    if any(char.isspace() for char in token):
        return "with a token holding white space"
    if len(set(token)) == 1:
        return "with a token of one character repeated"
    return None


def default_state_dir(platform: str = sys.platform) -> str:
    """``$XDG_STATE_HOME/gemwire/server``, else ``~/.local/state/gemwire/server``; on
    Windows (``platform``) ``%LOCALAPPDATA%\\gemwire\\server``, where a user's programs keep
    their local state."""
    base = os.environ.get("XDG_STATE_HOME")
    if not base and platform == "win32":
        base = os.environ.get("LOCALAPPDATA")
    if not base:
        base = os.path.join(os.path.expanduser("~"), ".local", "state")
    return str(Path(base) / "gemwire" / "server")


def _netloc(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class ServerConfig(msgspec.Struct, frozen=True, kw_only=True):
    """How the server runs. ``roots`` are real paths (workspaces must lie under one);
    ``agents`` are the ``--agent NAME=COMMAND`` ones, by name."""

    host: str
    port: int
    token: str
    roots: tuple[str, ...]
    state_dir: str
    allow_origins: tuple[str, ...] = ()
    """Origins allowed besides the server's own (``--allow-origin``)."""
    agents: dict[str, tuple[str, ...]] = {}
    warm: tuple[str, ...] = ()
    """Agents kept started ahead, one each, for the next new session (``--warm``)."""
    max_sessions: int = DEFAULT_MAX_SESSIONS
    sessions_per_agent: int = 20
    """Sessions one ACP agent process serves at most (``--sessions-per-agent``; 1: a
    process a session). Sessions of one agent share its processes up to that: 20 by
    default, a twentieth of the memory a session (BENCHMARKS.md)."""
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    permission_timeout: float = DEFAULT_PERMISSION_TIMEOUT
    permission_grace: float = PERMISSION_GRACE
    max_body_bytes: int = MAX_BODY_BYTES
    max_ws_message_bytes: int = DEFAULT_MAX_LINE_BYTES
    """The stdio line cap: a WebSocket message over it closes the socket with 1009."""
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    sessions_home: str | None = None
    """The folder holding the agents' own folders (``.gemini``, ``.claude``, ...) whose saved
    sessions and usage ``/v1/saved-sessions`` and ``/v1/usage`` read; ``None``: each agent's
    own, found as the agent finds it (``GEMINI_CLI_HOME``, ``CLAUDE_CONFIG_DIR``, ..., else
    ``HOME``)."""

    @property
    def scheme(self) -> str:
        return "https" if self.ssl_certfile else "http"

    @property
    def url(self) -> str:
        """The base URL the server prints (no trailing slash)."""
        return f"{self.scheme}://{_netloc(self.host, self.port)}"

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    @property
    def wildcard(self) -> bool:
        """Bound to every address (``0.0.0.0``, ``::``): any ``Host`` may name it."""
        return self.host in _WILDCARDS

    def allowed_origins(self) -> frozenset[str]:
        """The origins a browser request may come from: the server's own
        (``127.0.0.1``, ``localhost`` and ``--host``, http and https) and ``--allow-origin``."""
        hosts = {"127.0.0.1", "localhost", self.host}
        own = {
            f"{scheme}://{_netloc(host, self.port)}"
            for scheme in ("http", "https")
            for host in hosts
            if host not in _WILDCARDS
        }
        return frozenset(own | {origin.rstrip("/") for origin in self.allow_origins})

    def allowed_hosts(self) -> frozenset[str]:
        """The ``Host`` header values accepted (DNS rebinding): the netlocs of
        `allowed_origins`, and the same hosts without a port."""
        netlocs = {urlsplit(origin).netloc.lower() for origin in self.allowed_origins()}
        bare = {urlsplit(origin).hostname or "" for origin in self.allowed_origins()}
        return frozenset(netlocs | {h for h in bare if h} | {f"[{h}]" for h in bare if ":" in h})
