"""The login cookie is bound to the server's port: named for it, holding a value derived
from the token (never the token), and taken only from the server's own origin."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from kit.server import BASE, TOKEN, make_config, served

from gemwire.server import create_app
from gemwire.server.security import session_cookie

pytestmark = pytest.mark.anyio


async def test_the_cookie_is_not_the_token_and_only_the_servers_origin_may_use_it(
    tmp_path: Path,
) -> None:
    config = make_config(str(tmp_path), str(tmp_path / "state"))
    async with served(create_app(config)) as server:
        bare = httpx.AsyncClient(transport=server.http._transport, base_url=BASE)
        login = await bare.get(f"/?token={TOKEN}", headers={"Host": "127.0.0.1:8765"})
        name, value = session_cookie(config)
        assert login.headers["set-cookie"].startswith(f"gemwire_session_8765={value};")
        assert TOKEN not in login.headers["set-cookie"]
        cases = {
            # The browser's own page, what the user typed, and no browser: in.
            (name, value, "same-origin"): 404,
            (name, value, "none"): 404,
            (name, value, None): 404,
            # A page of another port of this host (the same site): out.
            (name, value, "same-site"): 401,
            (name, value, "cross-site"): 401,
            # The token where the derived value belongs, or another port's cookie: out.
            (name, TOKEN, None): 401,
            ("gemwire_session_8766", value, None): 401,
        }
        for (cookie, given, site), status in cases.items():
            headers = {"Host": "127.0.0.1:8765", "Cookie": f"{cookie}={given}"}
            if site is not None:
                headers["Sec-Fetch-Site"] = site
            response = await bare.get("/v1/anything", headers=headers)
            assert response.status_code == status, (cookie, given, site)
        # The derived value is no bearer token.
        bearer = await bare.get(
            "/v1/sessions", headers={"Host": "127.0.0.1:8765", "Authorization": f"Bearer {value}"}
        )
        assert bearer.status_code == 401
        await bare.aclose()
    other = session_cookie(make_config(str(tmp_path), str(tmp_path / "state"), port=8766))
    assert other[0] == "gemwire_session_8766"
    assert other[1] != value
