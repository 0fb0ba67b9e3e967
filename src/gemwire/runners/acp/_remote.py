"""What the two remote channels share: the ``remote`` extra, the token, failures as errors.

httpx and httpx-ws are imported here, when a remote channel opens, so that ``import
gemwire`` never needs them; without them the channel says what to install.

    >>> shown("https://user:pw@build-box:8765/acp/gemini?token=s3cret")
    'https://build-box:8765/acp/gemini'
    >>> type(refused("ws://h/acp/nope", 404, "unknown agent")).__name__
    'AgentNotFound'
"""

from __future__ import annotations

from types import ModuleType
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from gemwire.errors import AgentNotFound, AuthFailed, GemwireError

__all__ = (
    "INSTALL_REMOTE",
    "bearer",
    "import_remote",
    "refused",
    "shown",
    "split_token",
    "unreachable",
)

INSTALL_REMOTE = "pip install 'gemwire[remote]'"

CONNECT_TIMEOUT = 30.0
"""Seconds to reach the endpoint; a stream, once open, waits as long as the agent."""


def import_remote() -> tuple[ModuleType, ModuleType]:
    """httpx and httpx_ws, or `AgentNotFound` saying how to install them."""
    try:
        import httpx
        import httpx_ws
    except ImportError as exc:
        raise AgentNotFound(
            f"a remote ACP agent needs httpx and httpx-ws: {INSTALL_REMOTE}"
        ) from exc
    return httpx, httpx_ws


def bearer(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def shown(url: str) -> str:
    """The URL to show in a message: no query (it may carry the token), no password."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def split_token(url: str) -> tuple[str, str | None]:
    """The URL without its ``token`` query parameter (the rest of the query kept), and the
    token.

    >>> split_token("ws://h:8765/acp/gemini?token=abc")
    ('ws://h:8765/acp/gemini', 'abc')
    >>> split_token("https://h/acp/claude?x=1&token=abc")
    ('https://h/acp/claude?x=1', 'abc')
    >>> split_token("ws://h/acp/gemini")
    ('ws://h/acp/gemini', None)
    """
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    tokens = [value for name, value in query if name == "token"]
    if not tokens:
        return url, None
    rest = urlencode([(name, value) for name, value in query if name != "token"])
    return urlunsplit(parts._replace(query=rest)), tokens[-1]


def unreachable(url: str, exc: BaseException) -> AgentNotFound:
    """The endpoint cannot be reached (refused, no such host, TLS): like a missing agent."""
    return AgentNotFound(
        f"cannot reach the ACP endpoint {shown(url)}: {str(exc) or type(exc).__name__}"
    )


def refused(url: str, status: int, detail: str) -> GemwireError:
    """The endpoint answered the opening request with an HTTP error."""
    where = shown(url)
    said = f"(HTTP {status}): {detail}" if detail else f"(HTTP {status})"
    if status in (401, 403):
        return AuthFailed(f"the ACP endpoint {where} refused the token {said}")
    if status == 404:
        return AgentNotFound(f"no ACP agent at {where} {said}")
    return AgentNotFound(f"the ACP endpoint {where} did not accept the connection {said}")


def error_detail(body: bytes) -> str:
    """The message of an error body (``{"error": {"message": ...}}``, the SDK's
    ``{"error": "..."}``), else its start."""
    import msgspec

    try:
        error = msgspec.json.decode(body).get("error")
    except (msgspec.DecodeError, UnicodeDecodeError, AttributeError):
        return body[:200].decode(errors="replace").strip()
    if isinstance(error, dict):
        return str(error.get("message", ""))
    return str(error or "")
