"""The server's front door, one pure ASGI middleware for HTTP and WebSocket alike.

In order, for every request:

1. ``Host`` must name the server (DNS rebinding): `ServerConfig.allowed_hosts`, unless
   it is bound to every address (``0.0.0.0``), where the token alone guards it.
2. A request with an ``Origin`` (a browser) must come from `ServerConfig.allowed_origins`.
3. ``GET /health`` and ``GET /ready`` need nothing more.
4. ``GET /?token=T`` with the right token sets the login cookie (`session_cookie`,
   HttpOnly, SameSite=Strict) and redirects to ``/``: how a browser page authenticates
   (EventSource and WebSocket send the cookie; they cannot send headers).
5. Everything else needs the token: ``Authorization: Bearer T``, or that cookie from a
   page of the server's own origin.

Browsers send a host's cookies to every port of it, and count other ports as the same
site. So the cookie is named for the server's port and holds a value derived from the
token, not the token (another server on that host that receives it cannot use it as a
bearer, on the API or ``/acp/``), and it is taken only from a request the browser says
comes from the server's own origin (``Sec-Fetch-Site: same-origin``, or ``none`` for
what the user typed) or from no browser (no such header): a page on another port cannot
use it.
6. A body over ``max_body_bytes`` is refused with 413 before any route reads it, one that
   does not come whole within `BODY_TIMEOUT` with 408; but
   the ACP endpoint's (``/acp/...``) is left to the endpoint, which reads it as it comes
   and refuses one over the stdio line cap (64 MiB), as an agent on stdio would.

A refused HTTP request gets the API's JSON error; a refused WebSocket is closed with 1008
before it is accepted (the client sees HTTP 403 on the handshake).
"""

from __future__ import annotations

import hashlib
import hmac
from http.cookies import SimpleCookie
from urllib.parse import parse_qs

import anyio
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gemwire.server.config import MAX_HEAD_BYTES, ServerConfig
from gemwire.server.responses import (
    ApiError,
    Forbidden,
    TooLarge,
    Unauthorized,
    error_body,
)

__all__ = (
    "BODY_TIMEOUT",
    "COOKIE",
    "PUBLIC_PATHS",
    "SecurityMiddleware",
    "session_cookie",
    "token_matches",
)

COOKIE = "gemwire_session"
"""The login cookie's name, before the server's port."""
_OWN_ORIGIN = frozenset({"same-origin", "none"})
"""``Sec-Fetch-Site`` values of a request the cookie is taken from."""
PUBLIC_PATHS = frozenset({"/health", "/ready"})
ACP_PREFIX = "/acp/"
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
WS_POLICY_VIOLATION = 1008
BODY_TIMEOUT = 60.0
"""Seconds a request's body has to come whole (a head has `run.HEAD_TIMEOUT`)."""


def token_matches(given: str | None, token: str) -> bool:
    """Compared in constant time.

    >>> token_matches("abc", "abc"), token_matches("abd", "abc"), token_matches(None, "abc")
    (True, False, False)
    """
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def session_cookie(config: ServerConfig) -> tuple[str, str]:
    """The login cookie's name (for the server's port) and value (derived from the token).

    >>> from gemwire.server.config import ServerConfig
    >>> config = ServerConfig(host="127.0.0.1", port=8765, token="t0k", roots=("/srv",),
    ...                       state_dir="/var/gemwire")
    >>> name, value = session_cookie(config)
    >>> name, len(value), "t0k" in value
    ('gemwire_session_8765', 64, False)
    """
    origin = f"gemwire login cookie for port {config.port}".encode()
    return f"{COOKIE}_{config.port}", hmac.new(
        config.token.encode(), origin, hashlib.sha256
    ).hexdigest()


def _cookie_value(headers: Headers, name: str) -> str | None:
    if headers.get("sec-fetch-site", "same-origin") not in _OWN_ORIGIN:
        return None  # a page of another origin (another port of this host)
    raw = headers.get("cookie")
    if not raw:
        return None
    cookie: SimpleCookie = SimpleCookie()
    try:
        cookie.load(raw)
    except Exception:  # noqa: BLE001 - a malformed cookie header is no token
        return None
    morsel = cookie.get(name)
    return morsel.value if morsel is not None else None


def _check_head_size(scope: Scope) -> None:
    """A head over `MAX_HEAD_BYTES` that a server passed on (`run`'s refuses it first; an
    app served otherwise may not): 431."""
    size = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"") + 16
    size += sum(len(name) + len(value) + 4 for name, value in scope["headers"])
    if size > MAX_HEAD_BYTES:
        raise ApiError(
            f"the request head is over {MAX_HEAD_BYTES} bytes", status=431, kind="too_large"
        )


def _bearer_token(headers: Headers) -> str | None:
    scheme, _, value = headers.get("authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" else None


class SecurityMiddleware:
    """See the module docstring."""

    def __init__(self, app: ASGIApp, config: ServerConfig) -> None:
        self.app = app
        self.config = config
        self._hosts = config.allowed_hosts()
        self._origins = config.allowed_origins()
        self._cookie = session_cookie(config)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        try:
            _check_head_size(scope)
            self._check_host_and_origin(headers)
            path = scope.get("path", "")
            if scope["type"] == "http" and path in PUBLIC_PATHS:
                await self.app(scope, receive, send)
                return
            if scope["type"] == "http" and path == "/" and scope.get("query_string"):
                query = parse_qs(scope["query_string"].decode("latin-1"))
                if "token" in query:
                    await self._login(query["token"][-1], send)
                    return
            bearer = _bearer_token(headers)
            cookie = None if bearer else _cookie_value(headers, self._cookie[0])
            if not (
                token_matches(bearer, self.config.token) or token_matches(cookie, self._cookie[1])
            ):
                given = bearer or cookie
                raise Unauthorized("missing or wrong token" if given else "a token is required")
            if (
                scope["type"] == "http"
                and scope.get("method") in _BODY_METHODS
                and not path.startswith(ACP_PREFIX)
            ):
                receive = await self._limited_body(headers, receive)
        except ApiError as error:
            await self._refuse(scope, send, error)
            return
        await self.app(scope, receive, send)

    def _check_host_and_origin(self, headers: Headers) -> None:
        host = headers.get("host", "").lower()
        if not self.config.wildcard and host not in self._hosts:
            raise Forbidden(f"the Host header {host!r} does not name this server")
        origin = headers.get("origin")
        if origin is not None and origin.rstrip("/") not in self._origins:
            raise Forbidden(f"the origin {origin!r} is not allowed (--allow-origin)")

    async def _login(self, given: str, send: Send) -> None:
        if not token_matches(given, self.config.token):
            raise Unauthorized("wrong token")
        secure = "; Secure" if self.config.scheme == "https" else ""
        name, value = self._cookie
        cookie = f"{name}={value}; HttpOnly; SameSite=Strict; Path=/{secure}"
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [
                    (b"location", b"/"),
                    (b"set-cookie", cookie.encode("latin-1")),
                    (b"content-length", b"0"),
                    (b"cache-control", b"no-store"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    async def _limited_body(self, headers: Headers, receive: Receive) -> Receive:
        """The whole body, read now (at most ``max_body_bytes``), replayed to the app."""
        limit = self.config.max_body_bytes
        too_large = TooLarge(f"the request body is over {limit} bytes")
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > limit:
            raise too_large
        chunks: list[bytes] = []
        size = 0
        with anyio.move_on_after(BODY_TIMEOUT) as waiting:
            while True:
                message = await receive()
                if message["type"] != "http.request":  # the client went away
                    return _replay([message], receive)
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    raise too_large
                chunks.append(chunk)
                if not message.get("more_body", False):
                    break
        if waiting.cancelled_caught:
            raise ApiError(
                f"the request body did not come within {BODY_TIMEOUT:g} s",
                status=408,
                kind="timeout",
            )
        body: Message = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        return _replay([body], receive)

    async def _refuse(self, scope: Scope, send: Send, error: ApiError) -> None:
        if scope["type"] == "websocket":
            await send(
                {"type": "websocket.close", "code": WS_POLICY_VIOLATION, "reason": str(error)[:120]}
            )
            return
        body = error_body(error.kind, str(error))
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ]
        if error.status == 401:
            headers.append((b"www-authenticate", b"Bearer"))
        await send({"type": "http.response.start", "status": error.status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A receive that gives ``messages`` first, then what ``receive`` gives."""
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed
