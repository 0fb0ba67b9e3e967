"""The OpenAPI 3.1 document of ``gemwire serve``, served at ``GET /openapi.json`` and kept as
docs/openapi.json.

It is built from the app's routes (each path, method and path parameter) and the
description of each route's endpoint (`openapi_table.described`: its query parameters,
request and response types); the schemas come from the `gemwire.serve_api` Structs the
routes decode and encode (msgspec), the events' from the same `gemwire.events.Event` that
docs/events.schema.json is made of. A route without a description is listed by
`undescribed` (tests/unit/server/test_openapi.py fails on it), and so is a description whose
path parameters are not its route's, or whose endpoint is in no route. Regenerate the
committed file with::

    python -c "from gemwire.server.openapi import main; main()" > docs/openapi.json
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute

from gemwire.events import Event
from gemwire.serve_api import (
    AgentEntry,
    Batches,
    BatchRequest,
    BatchView,
    ErrorBody,
    Health,
    Ready,
    SavedEvents,
    SavedMessages,
    SavedSessions,
    WsOp,
    WsReply,
)
from gemwire.server.envelopes import EventEnvelope, StateEnvelope
from gemwire.server.openapi_shapes import (
    REF,
    EventEnvelopes,
    Operation,
    ProgressEnvelope,
    ProgressEnvelopes,
)
from gemwire.server.openapi_table import described, endpoints
from gemwire.server.responses import JsonResponse
from gemwire.sessions import UsageReport

__all__ = ("ROUTES", "openapi_document", "undescribed")


_NAMED = (
    ErrorBody,
    Health,
    Ready,
    EventEnvelope,
    StateEnvelope,
    EventEnvelopes,
    ProgressEnvelope,
    ProgressEnvelopes,
    SavedSessions,
    SavedEvents,
    SavedMessages,
    Batches,
    BatchView,
    BatchRequest,
    UsageReport,
    AgentEntry,
    Event,
    WsOp,
    WsReply,
)
"""Types whose schemas are components whether or not a route names them (the envelopes
are what the streams carry; the WebSocket's ops and replies what its frames carry)."""

_CONVERTOR = re.compile(r"\{([^}:]+):[^}]+\}")
_PARAM = re.compile(r"\{([^}]+)\}")


class _Endpoint(msgspec.Struct, frozen=True):
    """A method at a path (HEAD left out; a WebSocket is a GET, its upgrade) and what
    answers it: a route's endpoint, or ``None`` for a mounted app."""

    method: str
    path: str
    endpoint: object

    @property
    def name(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def path_params(self) -> list[str]:
        return _PARAM.findall(self.path)

    def operation(self) -> Operation | None:
        return described(self.endpoint, self.method, self.path_params)


def _endpoints(routes: Sequence[BaseRoute], prefix: str = "") -> list[_Endpoint]:
    found: list[_Endpoint] = []
    for route in routes:
        if isinstance(route, Route):
            path = _CONVERTOR.sub(r"{\1}", prefix + route.path)
            methods = sorted((route.methods or {"GET"}) - {"HEAD"})
            found += [_Endpoint(method, path, route.endpoint) for method in methods]
        elif isinstance(route, WebSocketRoute):
            path = _CONVERTOR.sub(r"{\1}", prefix + route.path)
            found.append(_Endpoint("GET", path, route.endpoint))
        elif isinstance(route, Mount):
            inner = route.routes
            if inner:
                found += _endpoints(inner, prefix + route.path)
            else:
                found.append(_Endpoint("GET", prefix + route.path + "/{path}", None))
    return found


def _path_params(op: Operation) -> list[str]:
    return [p.name for p in op.params if p.where == "path"]


def undescribed(routes: Sequence[BaseRoute]) -> tuple[list[str], list[str]]:
    """Routes without a description (``METHOD path``; with what its path parameters are
    described as, where they are not the route's), and described endpoints in no route."""
    found = _endpoints(routes)
    missing: list[str] = []
    for each in found:
        op = each.operation()
        if op is None:
            missing.append(each.name)
        elif _path_params(op) != each.path_params:
            missing.append(f"{each.name} (path parameters described: {_path_params(op)})")
    used = [each.endpoint for each in found]
    stale = [
        getattr(endpoint, "__qualname__", repr(endpoint))
        for endpoint in endpoints()
        if not any(_is(endpoint, candidate) for candidate in used)
    ]
    return missing, stale


def _is(described_endpoint: object, endpoint: object) -> bool:
    if isinstance(described_endpoint, type):
        return isinstance(endpoint, described_endpoint)
    return getattr(endpoint, "__func__", endpoint) is described_endpoint


def _content(response: Any) -> dict[str, Any]:
    if isinstance(response, dict):
        return {media: {"schema": schema} for media, schema in response.items()}
    return {"application/json": {"schema": {"$ref": REF.format(name=response.__name__)}}}


def _operation(method: str, path: str, op: Operation) -> dict[str, Any]:
    described: dict[str, Any] = {
        "summary": op.summary,
        "operationId": _operation_id(method, path),
        "tags": [op.tag],
    }
    if op.description:
        described["description"] = op.description
    if op.params:
        described["parameters"] = [
            {
                "name": p.name,
                "in": p.where,
                "required": p.where == "path",
                "description": p.description,
                "schema": p.schema,
            }
            for p in op.params
        ]
    if op.body is not None:
        described["requestBody"] = {"required": True, "content": _content(op.body)}
    responses: dict[str, Any] = {}
    ok: dict[str, Any] = {"description": "Switching protocols" if op.status == 101 else "OK"}
    if op.response is not None:
        ok["content"] = _content(op.response)
    for status in (op.status, *op.also):
        responses[str(status)] = ok
    statuses = sorted({*op.errors, *(() if op.public else (401, 403))})
    for status in statuses:
        responses[str(status)] = {
            "description": _REASONS[status],
            "content": _content(ErrorBody),
        }
    described["responses"] = responses
    if op.public:
        described["security"] = []
    described.update(op.extra)
    return described


_REASONS = {
    400: "Bad request",
    401: "No token, or a wrong one",
    403: "A foreign Origin or Host, or a path outside the roots",
    404: "Not found",
    406: "Not acceptable",
    409: "Conflict",
    413: "The body is over 1 MiB",
    415: "Unsupported media type",
    422: "Cannot be read",
    429: "A limit is reached",
    501: "Not implemented (a JSON-RPC batch)",
    502: "The agent ended first",
    503: "Shutting down",
    504: "The agent did not answer in time",
}


def _operation_id(method: str, path: str) -> str:
    """``get_v1_batches_batch_id_events``."""
    words = re.findall(r"[A-Za-z0-9]+", path)
    return "_".join([method.lower(), *words]) if words else method.lower()


def openapi_document(routes: Sequence[BaseRoute]) -> dict[str, Any]:
    """The document of ``routes`` (an app's ``routes``); routes without a description
    are left out (`undescribed` names them)."""
    paths: dict[str, dict[str, Any]] = {}
    operations: list[Operation] = []
    for each in _endpoints(routes):
        op = each.operation()
        if op is not None:
            paths.setdefault(each.path, {})[each.method.lower()] = _operation(
                each.method, each.path, op
            )
            operations.append(op)
    named = [*_NAMED, *_referenced(operations)]
    _, components = msgspec.json.schema_components(named, ref_template=REF)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "gemwire serve",
            "version": "1",
            "description": "Agents behind an HTTP, SSE and WebSocket API (docs/server.md). "
            "Events are the `--json` vocabulary of docs/events.md, in envelopes "
            '`{"seq": N, "event": {...}}`.',
        },
        "security": [{"bearer": []}, {"cookie": []}],
        "paths": dict(sorted(paths.items())),
        "components": {
            "schemas": dict(sorted(components.items())),
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "cookie": {
                    "type": "apiKey",
                    "in": "cookie",
                    "name": "gemwire_session_PORT",
                    "description": "PORT is the server's; the value is derived from the token "
                    "(`/?token=` sets it).",
                },
            },
        },
    }


def _referenced(operations: list[Operation]) -> list[Any]:
    """Types the operations name as a body or a response."""
    found: list[Any] = []
    for op in operations:
        for shape in (op.body, op.response):
            if shape is not None and not isinstance(shape, dict) and shape not in found:
                found.append(shape)
    return found


def render(document: dict[str, Any]) -> str:
    """The document as committed: sorted keys, two-space indents, a final newline."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


async def openapi_json(request: Request) -> JsonResponse:
    cached = getattr(request.app.state, "gemwire_openapi", None)
    if cached is None:
        cached = request.app.state.gemwire_openapi = openapi_document(request.app.routes)
    return JsonResponse(cached)


ROUTES: list[BaseRoute] = [Route("/openapi.json", openapi_json, methods=["GET"])]


def main() -> None:
    """Write the document of the app's routes to stdout (the module docstring's command)."""
    from gemwire.server.app import create_app
    from gemwire.server.config import ServerConfig

    config = ServerConfig(host="127.0.0.1", port=8765, token="-", roots=("/",), state_dir="/-")
    sys.stdout.write(render(openapi_document(create_app(config).routes)))
