"""The front door: token, cookie login, Origin, Host, body size; HTTP and WebSocket."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from httpx_ws import WebSocketDisconnect
from kit.server import BASE, TOKEN, Served, auth, make_config, served
from starlette.applications import Starlette

from gemwire._version import __version__
from gemwire.server import create_app
from gemwire.server.security import session_cookie

pytestmark = pytest.mark.anyio


COOKIE_NAME, COOKIE_VALUE = session_cookie(make_config("/srv", "/var/gemwire"))


def app_for(tmp_path: Path) -> Starlette:
    return create_app(make_config(str(tmp_path), str(tmp_path / "state")))


async def get(server: Served, path: str, **headers: str) -> httpx.Response:
    """A GET with exactly ``headers`` (no token unless given)."""
    transport = httpx.ASGITransport(app=server.app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as bare:
        return await bare.get(path, headers=headers, follow_redirects=False)


async def test_health_and_ready_need_no_token(tmp_path: Path) -> None:
    async with served(app_for(tmp_path)) as server:
        health = await get(server, "/health")
        assert (health.status_code, health.json()) == (
            200,
            {"status": "ok", "version": __version__},
        )
        ready = await get(server, "/ready")
        assert (ready.status_code, ready.json()) == (200, {"ready": True})


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ({}, "a token is required"),
        ({"Authorization": "Bearer wrong"}, "missing or wrong token"),
        ({"Authorization": f"Basic {TOKEN}"}, "a token is required"),
        ({"Cookie": f"{COOKIE_NAME}=wrong"}, "missing or wrong token"),
    ],
)
async def test_every_other_route_needs_the_token(
    tmp_path: Path, headers: dict[str, str], message: str
) -> None:
    async with served(app_for(tmp_path)) as server:
        response = await get(server, "/v1/anything", **headers)
        assert response.status_code == 401
        assert response.json() == {"error": {"kind": "unauthorized", "message": message}}
        assert response.headers["www-authenticate"] == "Bearer"


async def test_with_the_token_an_unknown_route_is_a_json_404(tmp_path: Path) -> None:
    async with served(app_for(tmp_path)) as server:
        response = await server.request("GET", "/v1/anything")
        assert response.status_code == 404
        assert response.json() == {"error": {"kind": "not_found", "message": "Not Found"}}


async def test_the_token_url_sets_the_cookie_and_redirects(tmp_path: Path) -> None:
    async with served(app_for(tmp_path)) as server:
        response = await get(server, f"/?token={TOKEN}")
        assert response.status_code == 303
        assert response.headers["location"] == "/"
        assert response.headers["set-cookie"] == (
            f"{COOKIE_NAME}={COOKIE_VALUE}; HttpOnly; SameSite=Strict; Path=/"
        )
        past = await get(server, "/v1/anything", Cookie=f"{COOKIE_NAME}={COOKIE_VALUE}")
        assert past.status_code == 404  # past the door


async def test_a_wrong_token_url_sets_nothing(tmp_path: Path) -> None:
    async with served(app_for(tmp_path)) as server:
        response = await get(server, "/?token=wrong")
        assert response.status_code == 401
        assert "set-cookie" not in response.headers


@pytest.mark.parametrize(
    "origin", ["http://127.0.0.1:8765", "http://localhost:8765", "https://localhost:8765"]
)
async def test_the_servers_own_origins_pass(tmp_path: Path, origin: str) -> None:
    async with served(app_for(tmp_path)) as server:
        assert (await get(server, "/health", Origin=origin)).status_code == 200


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "http://127.0.0.1:9999", "null", "http://localhost"]
)
async def test_a_foreign_origin_is_refused_even_with_the_token(tmp_path: Path, origin: str) -> None:
    async with served(app_for(tmp_path)) as server:
        response = await get(server, "/health", Origin=origin, **auth())
        assert response.status_code == 403
        assert response.json() == {
            "error": {
                "kind": "forbidden",
                "message": f"the origin {origin!r} is not allowed (--allow-origin)",
            }
        }


async def test_an_allowed_origin_passes(tmp_path: Path) -> None:
    config = make_config(str(tmp_path), str(tmp_path / "s"), allow_origins=("https://ui.example/",))
    async with served(create_app(config)) as server:
        response = await get(server, "/v1/x", Origin="https://ui.example", **auth())
        assert response.status_code == 404


async def test_a_rebound_host_is_refused(tmp_path: Path) -> None:
    async with served(app_for(tmp_path)) as server:
        response = await get(server, "/health", Host="attacker.example:8765")
        assert response.status_code == 403
        assert response.json()["error"]["message"] == (
            "the Host header 'attacker.example:8765' does not name this server"
        )
        assert (await get(server, "/health", Host="localhost:8765")).status_code == 200


async def test_a_wildcard_bind_takes_any_host_but_still_the_token(tmp_path: Path) -> None:
    config = make_config(str(tmp_path), str(tmp_path / "s"), host="0.0.0.0")
    async with served(create_app(config)) as server:
        assert (await get(server, "/health", Host="buildbox:8765")).status_code == 200
        assert (await get(server, "/v1/x", Host="buildbox:8765")).status_code == 401


async def test_a_body_over_one_mib_is_413_before_any_route(tmp_path: Path) -> None:
    async with served(app_for(tmp_path)) as server:
        response = await server.request("POST", "/v1/sessions", content=b"x" * (2 * 1024 * 1024))
        assert response.status_code == 413
        assert response.json() == {
            "error": {"kind": "too_large", "message": "the request body is over 1048576 bytes"}
        }


async def test_a_chunked_body_over_the_limit_is_413_too(tmp_path: Path) -> None:
    async with served(app_for(tmp_path)) as server:

        async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: counted as it comes
            for _ in range(3):
                yield b"x" * (512 * 1024)

        response = await server.request("POST", "/v1/sessions", content=chunks())
        assert response.status_code == 413


@pytest.mark.parametrize(
    "headers",
    [{"Authorization": ""}, {"Authorization": "Bearer wrong"}, {"Origin": "http://evil.example"}],
)
async def test_a_refused_websocket_is_closed_1008_before_accept(
    tmp_path: Path, headers: dict[str, Any]
) -> None:
    async with served(app_for(tmp_path)) as server:
        with pytest.raises(WebSocketDisconnect) as caught:
            async with server.ws("/v1/sessions/x/ws", headers=headers):
                pass
        assert caught.value.code == 1008
