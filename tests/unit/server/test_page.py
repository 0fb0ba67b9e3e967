"""The web page's routes: ``/`` and ``/static/...``, behind the token, with a strict CSP;
the files are package data (in the wheel), and no page text is ever parsed as HTML."""

from __future__ import annotations

import re
import tomllib
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import httpx
import pytest
from kit.server import BASE, TOKEN, Served, make_config, served

from gemwire.server import create_app
from gemwire.server.routes_page import CONTENT_SECURITY_POLICY
from gemwire.server.security import session_cookie

pytestmark = pytest.mark.anyio

STATIC = Path(__file__).parents[3] / "src" / "gemwire" / "server" / "static"
MODULES = sorted(p.relative_to(STATIC).as_posix() for p in STATIC.rglob("*.js"))


def serving(tmp_path: Path) -> AbstractAsyncContextManager[Served]:
    """The app with its lifespan, in the test's own task (the session manager's task group
    must be left in the task that entered it: no async fixture)."""
    return served(create_app(make_config(str(tmp_path), str(tmp_path / "state"))))


async def bare_get(server: Served, path: str, **headers: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=server.app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as bare:
        return await bare.get(path, headers=headers, follow_redirects=False)


async def test_the_token_url_logs_in_with_a_cookie_and_the_page_has_a_strict_csp(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path) as server:
        login = await bare_get(server, f"/?token={TOKEN}")
        assert login.status_code == 303
        assert login.headers["location"] == "/"
        cookie = login.headers["set-cookie"]
        name, value = session_cookie(make_config("/srv", "/var/gemwire"))
        assert cookie == f"{name}={value}; HttpOnly; SameSite=Strict; Path=/"
        page = await bare_get(server, "/", Cookie=f"{name}={value}")
        assert page.status_code == 200
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert CONTENT_SECURITY_POLICY.startswith("default-src 'self'; connect-src 'self';")
        assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY
        assert page.headers["x-content-type-options"] == "nosniff"
        assert page.headers["cache-control"] == "no-store"
        assert '<script type="module" src="/static/js/app.js"></script>' in page.text


async def test_without_the_token_the_page_and_its_files_are_401(tmp_path: Path) -> None:
    async with serving(tmp_path) as server:
        for path in ("/", "/static/js/app.js", f"/?token={TOKEN}x"):
            response = await bare_get(server, path)
            assert response.status_code == 401, path
            assert response.json()["error"]["kind"] == "unauthorized"


@pytest.mark.parametrize("name", ["js/app.js", "app.css"])
async def test_static_files_come_with_their_type_and_the_csp(tmp_path: Path, name: str) -> None:
    async with serving(tmp_path) as server:
        response = await server.request("GET", f"/static/{name}")
        assert response.status_code == 200
        assert response.content == (STATIC / name).read_bytes()
        kind = "text/javascript" if name.endswith(".js") else "text/css"
        assert response.headers["content-type"] == f"{kind}; charset=utf-8"
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY


@pytest.mark.parametrize(
    "path", ["/static/nope.js", "/static/../routes_page.py", "/static/%2e%2e/app.py", "/static/"]
)
async def test_anything_else_under_static_is_a_json_404(tmp_path: Path, path: str) -> None:
    async with serving(tmp_path) as server:
        response = await server.request("GET", path)
        assert response.status_code == 404
        assert response.json()["error"]["kind"] == "not_found"


def test_the_page_never_parses_text_as_html_and_has_no_inline_code() -> None:
    """Agent text goes in as text: no innerHTML, outerHTML, insertAdjacentHTML,
    document.write, eval or Function in any module; no inline script or style."""
    forbidden = re.compile(
        r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|"
        r"\.style\b|setAttribute\(\s*\"(on|style|href|src)"
    )
    assert MODULES, STATIC
    for name in MODULES:
        text = (STATIC / name).read_text(encoding="utf-8")
        assert forbidden.findall(text) == [], name
        nothing_remote = text.replace('"http://www.w3.org/2000/svg"', "")
        assert "http://" not in nothing_remote, name
        assert "https://" not in nothing_remote, name
    index = (STATIC / "index.html").read_text(encoding="utf-8")
    assert re.findall(r"<script(?![^>]*\bsrc=)|<style|\sstyle=|\son\w+=", index) == []


def test_the_wheel_ships_the_page() -> None:
    """hatch's wheel target is the whole package folder, with no include or exclude that
    would leave the page out (``pip wheel .`` was checked to hold every file)."""
    root = Path(__file__).parents[3]
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    build = config["tool"]["hatch"]["build"]
    assert build == {"targets": {"wheel": {"packages": ["src/gemwire"]}}}
    assert STATIC.is_relative_to(root / "src" / "gemwire")
