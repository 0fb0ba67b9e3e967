"""The web page (docs/web.md): ``GET /``, ``GET /static/{name}`` and the icon.

The page is plain ES modules and CSS shipped in ``gemwire/server/static`` (package data, no
build step). It reaches the server only through the public API, with the cookie the
``/?token=`` login sets (`SecurityMiddleware`). Every response here carries a strict
Content-Security-Policy: nothing but this origin, no inline script or style, no frames.

The files are read once, when the routes are made: a name that is not one of them is a 404,
so no request path ever reaches the file system.

    >>> sorted(name for name in _static_files() if name.endswith(".css"))
    ['app.css']
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from gemwire.server.responses import NotFound

__all__ = ("CONTENT_SECURITY_POLICY", "routes")

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; connect-src 'self'; img-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
"""``'self'`` covers the page's own ``ws:``/``wss:`` origin in CSP level 3 browsers."""

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
}


def _walk(folder: Traversable, prefix: str) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for entry in folder.iterdir():
        name = prefix + entry.name
        if entry.is_dir():
            found |= _walk(entry, name + "/")
        elif any(name.endswith(suffix) for suffix in _TYPES):
            found[name] = entry.read_bytes()
    return found


def _static_files() -> dict[str, bytes]:
    """Every file of the page by its name under ``static/`` (``js/app.js``, ...)."""
    return _walk(resources.files("gemwire.server") / "static", "")


class Page:
    """The page's files, held in memory, and the two routes that answer with them."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self._files = files

    def _response(self, name: str, *, cache: str) -> Response:
        body = self._files[name]
        media_type = _TYPES[name[name.rindex(".") :]]
        headers = {**_HEADERS, "Cache-Control": cache}
        return Response(body, media_type=media_type, headers=headers)

    async def index(self, request: Request) -> Response:
        return self._response("index.html", cache="no-store")

    async def icon(self, request: Request) -> Response:
        return self._response("icon.svg", cache="no-cache")

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in self._files or name == "index.html":
            raise NotFound(f"no file {name!r} in the page")
        # Revalidated every time: an upgraded server never serves an old module.
        return self._response(name, cache="no-cache")


def routes() -> list[BaseRoute]:
    """``/`` and ``/static/...``, with the files read now."""
    page = Page(_static_files())
    return [
        Route("/", page.index, methods=["GET"]),
        Route("/favicon.ico", page.icon, methods=["GET"]),
        Route("/static/{name:path}", page.static, methods=["GET"]),
    ]
