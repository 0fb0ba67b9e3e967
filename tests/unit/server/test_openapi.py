"""The OpenAPI document: every route described, docs/openapi.json equal to what the app
builds, the event schemas those of docs/events.schema.json, served only with the token."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kit.server import BASE, Served, make_config, served
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route, WebSocketRoute

from gemwire.server import ServerConfig, create_app, routes_sessions
from gemwire.server.openapi import openapi_document, render, undescribed
from gemwire.server.openapi_table import endpoints

DOCS = Path(__file__).resolve().parents[3] / "docs"
REGENERATE = 'python -c "from gemwire.server.openapi import main; main()" > docs/openapi.json'


def app_routes() -> list[Any]:
    config = ServerConfig(host="127.0.0.1", port=8765, token="-", roots=("/",), state_dir="/-")
    return list(create_app(config).routes)


def test_every_route_is_described_and_every_description_has_its_route() -> None:
    missing, stale = undescribed(app_routes())
    assert missing == [], f"describe these routes' endpoints in openapi_table: {missing}"
    assert stale == [], f"these described endpoints are in no route: {stale}"


def test_a_route_without_a_description_is_named() -> None:
    async def endpoint(request: Any) -> PlainTextResponse:
        return PlainTextResponse("")

    extra = [
        Route("/v1/new/{thing:path}", endpoint, methods=["GET", "POST"]),
        WebSocketRoute("/v1/new/ws", endpoint),
        Mount("/static", app=PlainTextResponse("")),
    ]
    missing, stale = undescribed([*app_routes(), *extra])
    assert missing == [
        "GET /v1/new/{thing}",
        "POST /v1/new/{thing}",
        "GET /v1/new/ws",
        "GET /static/{path}",
    ]
    assert stale == []
    assert len(undescribed([])[1]) == len(endpoints()) >= 30


def test_a_route_whose_path_parameters_drifted_is_named() -> None:
    """A description follows its endpoint: moved to a path whose parameters are not those
    it describes, the route is named (its path itself comes from the route)."""
    moved = [
        Route("/v2/sessions/{session_id}/cancel", routes_sessions.cancel, methods=["POST"]),
        Route("/v2/runs/{run_id}/cancel", routes_sessions.cancel, methods=["POST"]),
    ]
    missing, _ = undescribed(moved)
    assert missing == ["POST /v2/runs/{run_id}/cancel (path parameters described: ['session_id'])"]
    paths = openapi_document(moved)["paths"]
    assert list(paths["/v2/sessions/{session_id}/cancel"]) == ["post"]


def test_the_committed_document_is_the_app_s() -> None:
    built = render(openapi_document(app_routes()))
    assert (DOCS / "openapi.json").read_text() == built, f"regenerate it: {REGENERATE}"


def _refs_to_components(value: Any) -> Any:
    """A schema of events.schema.json with its references (``$ref``, a discriminator's
    mapping) pointing where the OpenAPI document keeps the definitions."""
    if isinstance(value, dict):
        return {k: _refs_to_components(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_refs_to_components(v) for v in value]
    if isinstance(value, str) and value.startswith("#/$defs/"):
        return value.replace("#/$defs/", "#/components/schemas/")
    return value


def test_the_event_schemas_are_those_of_events_schema_json() -> None:
    events = json.loads((DOCS / "events.schema.json").read_text())
    document = openapi_document(app_routes())
    schemas = document["components"]["schemas"]
    definitions = events.pop("$defs")
    assert len(definitions) >= 20
    for name, definition in definitions.items():
        assert schemas[name] == _refs_to_components(definition), name
    envelope = schemas["EventEnvelope"]
    assert envelope["required"] == ["seq", "event"]
    assert envelope["properties"]["event"] == _refs_to_components(events)
    assert schemas["ProgressEnvelope"]["required"] == ["seq", "progress"]


def test_each_operation_has_its_statuses_and_security() -> None:
    paths = openapi_document(app_routes())["paths"]
    assert paths["/health"]["get"]["security"] == []
    assert "security" not in paths["/v1/usage"]["get"]
    assert sorted(paths["/v1/batches"]["post"]["responses"]) == [
        "200", "201", "400", "401", "403", "404", "409", "413",
    ]  # fmt: skip
    assert paths["/v1/batches/{batch_id}/events"]["get"]["x-envelope"] == {
        "$ref": "#/components/schemas/ProgressEnvelope"
    }
    assert sorted(paths["/v1/sessions/{session_id}/ws"]["get"]["responses"]) == [
        "101", "401", "403", "404",
    ]  # fmt: skip
    assert sorted(paths["/v1/sessions/{session_id}"]) == ["delete", "get"]
    params = paths["/v1/saved-sessions/{agent}/{session_id}"]["get"]["parameters"]
    assert [(p["name"], p["in"], p["required"]) for p in params] == [
        ("agent", "path", True),
        ("session_id", "path", True),
        ("format", "query", False),
        ("project", "query", False),
    ]


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Served]:
    async with served(create_app(make_config(str(tmp_path), str(tmp_path / "state")))) as s:
        yield s


@pytest.mark.anyio
async def test_served_with_the_token_only(server: Served) -> None:
    response = await server.request("GET", "/openapi.json")
    assert response.status_code == 200
    assert response.json() == openapi_document(server.app.routes)
    refused = await server.http.get(f"{BASE}/openapi.json", headers={"Authorization": ""})
    assert (refused.status_code, refused.json()["error"]["kind"]) == (401, "unauthorized")
