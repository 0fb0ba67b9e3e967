"""Every endpoint of ``gemwire serve`` described for its OpenAPI document (`openapi`), by the
endpoint itself: `described` gives a route's description. Its path, method and path
parameters are the route's; its bodies and answers the `gemwire.serve_api` Structs the
endpoint decodes and encodes."""

from __future__ import annotations

from collections.abc import Callable, Collection
from functools import cache

from gemwire.serve_api import (
    Cancelled,
    ConfigBody,
    Health,
    ModeBody,
    ModelBody,
    NewSession,
    PermissionAnswer,
    PermissionAnswered,
    PromptBody,
    Prompted,
    Ready,
    Roots,
    Sessions,
    SessionView,
)
from gemwire.server import routes_sessions, routes_ws
from gemwire.server.acp_endpoint import AcpEndpoint
from gemwire.server.openapi_acp import acp_operation
from gemwire.server.openapi_saved import SAVED_AND_BATCHES
from gemwire.server.openapi_shapes import (
    AFTER,
    LIMIT,
    SESSION,
    SSE,
    SSE_SCHEMA,
    Operation,
    Param,
    ref,
)
from gemwire.server.routes_page import Page

__all__ = ("described", "endpoints")


_ENVELOPES = {
    "type": "object",
    "properties": {
        "events": {
            "type": "array",
            "items": {"anyOf": [ref("EventEnvelope"), ref("StateEnvelope")]},
        },
        "last_seq": {"type": "integer"},
    },
    "required": ["events", "last_seq"],
}


Describe = Callable[[str, Collection[str]], Operation | None]
"""An endpoint serving several methods: its description for a method and the route's path
parameters (``None``: not described)."""


@cache
def _operations() -> dict[object, Operation | Describe]:
    # Imported here: the app's modules import `openapi`, which imports this module.
    from gemwire.server import app, openapi

    return _table(app.health, app.ready, openapi.openapi_json)


def described(endpoint: object, method: str, path_params: Collection[str]) -> Operation | None:
    """The description of ``endpoint`` (a route's: a function, a bound method, or an ASGI
    app such as `AcpEndpoint`) for ``method``."""
    known = _operations()
    entry = known.get(getattr(endpoint, "__func__", endpoint)) or known.get(type(endpoint))
    if entry is None or isinstance(entry, Operation):
        return entry
    return entry(method, path_params)


def endpoints() -> list[object]:
    """Every endpoint with a description (a class: its instances)."""
    return list(_operations())


def _table(
    health: object, ready: object, openapi_json: object
) -> dict[object, Operation | Describe]:
    return {
        health: Operation("Liveness", response=Health, public=True, description="Needs no token."),
        ready: Operation(
            "Readiness",
            "`ready` once the state folder is there and the managers run; 503 while shutting down. "
            "`degraded`: the sessions out of service (a log that could not be written or was "
            "found damaged).",
            response=Ready,
            errors=(503,),
            public=True,
        ),
        openapi_json: Operation(
            "This document",
            response={"application/json": {"type": "object"}},
        ),
        Page.index: Operation(
            "The web page (docs/web.md)",
            "`/?token=T` sets the `gemwire_session_PORT` cookie (derived from the token, bound to "
            "the server's port; HttpOnly, SameSite=Strict) and redirects "
            "(303) to `/`. Served with a strict Content-Security-Policy (`default-src 'self'`).",
            params=(Param("token", "The server's token, once: it becomes the cookie."),),
            response={"text/html": {"type": "string"}},
            errors=(401,),
            tag="page",
        ),
        Page.static: Operation(
            "A file of the web page (its ES modules, stylesheet and icon)",
            params=(Param("name", "The file's path under the page's folder.", where="path"),),
            response={"text/javascript": {"type": "string"}, "text/css": {"type": "string"}},
            errors=(401, 404),
            tag="page",
        ),
        Page.icon: Operation(
            "The page's icon (SVG)", response={"image/svg+xml": {"type": "string"}}, tag="page"
        ),
        routes_sessions.list_agents: Operation(
            "The agents the server runs",
            "Built-in agents (available or not, and why) and each `--agent NAME=COMMAND`.",
            response={"application/json": {"type": "array", "items": ref("AgentEntry")}},
            tag="sessions",
        ),
        routes_sessions.list_roots: Operation(
            "The folders workspaces must lie under", response=Roots, tag="sessions"
        ),
        routes_sessions.create_session: Operation(
            "Start a session",
            "An agent in a workspace under a root (default: the first root). With `continue`, "
            "the agent's saved session of that id is continued (`session/resume` where the agent "
            "offers it, else `session/load`, whose replayed history is logged with `replay: true`); "
            "409 when the agent can do neither. `mode` runs the session in that mode of the "
            "agent's (set before it is answered, and again whenever it is continued, a restarted "
            "server's too), in place of the mode that asks before acting, which a session is "
            "otherwise put in unless its `permissions` are `all`; 400 for a mode the agent "
            "refuses. An agent gemwire does not know the modes of is refused (400, kind "
            "`permissions_unenforceable`) unless the session has a `mode` or `permissions` `all`.",
            body=NewSession,
            status=201,
            response=SessionView,
            errors=(400, 404, 409, 413, 429),
            tag="sessions",
        ),
        routes_sessions.list_sessions: Operation(
            "List sessions",
            "Live ones and those kept in the state folder.",
            response=Sessions,
            tag="sessions",
        ),
        routes_sessions.get_session: Operation(
            "A session", params=(SESSION,), response=SessionView, errors=(404,), tag="sessions"
        ),
        routes_sessions.delete_session: Operation(
            "Close a session",
            "Stops its agent; its log stays (status `closed`).",
            params=(SESSION,),
            response=SessionView,
            errors=(404,),
            tag="sessions",
        ),
        routes_sessions.prompt: Operation(
            "Prompt",
            "Starts a turn (a stopped session is continued first); its events follow `after` on "
            "the session's stream. 409 while a turn runs.",
            params=(SESSION,),
            body=PromptBody,
            status=202,
            response=Prompted,
            errors=(400, 404, 409, 413),
            tag="sessions",
        ),
        routes_sessions.cancel: Operation(
            "Cancel the running turn",
            "It ends with its `turn_completed` (stop reason `cancelled`). 409 with no turn.",
            params=(SESSION,),
            status=202,
            response=Cancelled,
            errors=(404, 409),
            tag="sessions",
        ),
        routes_sessions.answer_permission: Operation(
            "Answer a permission request",
            "`option_id` one the agent offered (`null`: deny); `permission_resolved` follows.",
            params=(SESSION, Param("request_id", "The request's id.", where="path")),
            body=PermissionAnswer,
            response=PermissionAnswered,
            errors=(400, 404, 409),
            tag="sessions",
        ),
        routes_sessions.set_mode: Operation(
            "Set the session's mode",
            params=(SESSION,),
            body=ModeBody,
            response=SessionView,
            errors=(400, 404, 409),
            tag="sessions",
        ),
        routes_sessions.set_model: Operation(
            "Set the session's model",
            params=(SESSION,),
            body=ModelBody,
            response=SessionView,
            errors=(400, 404, 409),
            tag="sessions",
        ),
        routes_sessions.set_config: Operation(
            "Set one of the session's config options",
            params=(SESSION,),
            body=ConfigBody,
            response=SessionView,
            errors=(400, 404, 409),
            tag="sessions",
        ),
        routes_sessions.events: Operation(
            "The session's events",
            "Server-Sent Events of envelopes (`EventEnvelope`, and `StateEnvelope` for server "
            "state): every one logged after `after`, then live, with no gap and no duplicate. "
            "With `Accept: application/json`: the logged envelopes, no follow.",
            params=(SESSION, AFTER, LIMIT),
            response={SSE: SSE_SCHEMA, "application/json": _ENVELOPES},
            errors=(400, 404),
            tag="sessions",
            extra={"x-envelope": {"anyOf": [ref("EventEnvelope"), ref("StateEnvelope")]}},
        ),
        routes_ws.session_ws: Operation(
            "The session over a WebSocket",
            "An upgrade. The server sends envelopes as text frames (after `after`); the client "
            'may send `{"op": "prompt", "text"}`, `{"op": "permission", "request_id", '
            '"option_id"}` or `{"op": "cancel"}`, each answered with `{"reply": op, "ok", '
            '"error"?}`. Refused (1008) before it is accepted for a wrong token, Origin or '
            "session; closed with 1001 at shutdown, 1009 for a message over 64 MiB.",
            params=(SESSION, AFTER),
            status=101,
            errors=(404,),
            tag="sessions",
        ),
        **SAVED_AND_BATCHES,
        AcpEndpoint: acp_operation,
    }
