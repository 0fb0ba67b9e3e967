"""The agent's requests to a client, as one table: each method, the type its params decode
to, and the method of the typed `Client` that serves it.

As the ACP SDKs each have a ``Client`` protocol and a router, gemwire has `Client` (one
method per request an ACP client may serve) and `ROUTES`: the connection decodes a
request's params by ``ROUTES[method].params``, and the serving side answers it with
``ROUTES[method].serve(client, request_id, params)``, which calls the `Client` method of
that request with its exact type. A method not in the table is answered "method not
found" by the connection; no handler ever sees untyped params.

    >>> sorted(ROUTES)[:3]
    ['elicitation/create', 'fs/read_text_file', 'fs/write_text_file']
    >>> ROUTES["terminal/kill"].params.__name__
    'KillTerminalRequest'
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

import msgspec

from gemwire.wire import acp
from gemwire.wire.jsonrpc import RequestId

__all__ = ("ROUTES", "AgentRequestParams", "Client", "ClientResult", "Route")

AgentRequestParams = (
    acp.RequestPermissionRequest
    | acp.ReadTextFileRequest
    | acp.WriteTextFileRequest
    | acp.CreateTerminalRequest
    | acp.TerminalOutputRequest
    | acp.WaitForTerminalExitRequest
    | acp.KillTerminalRequest
    | acp.ReleaseTerminalRequest
    | acp.CreateElicitationRequest
)
"""The params of a request the agent sends to the client, of a method in `ROUTES`."""

ClientResult = (
    acp.RequestPermissionResponse
    | acp.ReadTextFileResponse
    | acp.WriteTextFileResponse
    | acp.CreateTerminalResponse
    | acp.TerminalOutputResponse
    | acp.WaitForTerminalExitResponse
    | acp.KillTerminalResponse
    | acp.ReleaseTerminalResponse
    | acp.CreateElicitationResponse
)
"""The client's answer to one of them."""


class Client(Protocol):
    """What an ACP client serves: one method per request of the agent's."""

    async def request_permission(
        self, request_id: RequestId, params: acp.RequestPermissionRequest
    ) -> acp.RequestPermissionResponse: ...

    async def read_text_file(
        self, request_id: RequestId, params: acp.ReadTextFileRequest
    ) -> acp.ReadTextFileResponse: ...

    async def write_text_file(
        self, request_id: RequestId, params: acp.WriteTextFileRequest
    ) -> acp.WriteTextFileResponse: ...

    async def create_terminal(
        self, request_id: RequestId, params: acp.CreateTerminalRequest
    ) -> acp.CreateTerminalResponse: ...

    async def terminal_output(
        self, request_id: RequestId, params: acp.TerminalOutputRequest
    ) -> acp.TerminalOutputResponse: ...

    async def wait_for_terminal_exit(
        self, request_id: RequestId, params: acp.WaitForTerminalExitRequest
    ) -> acp.WaitForTerminalExitResponse: ...

    async def kill_terminal(
        self, request_id: RequestId, params: acp.KillTerminalRequest
    ) -> acp.KillTerminalResponse: ...

    async def release_terminal(
        self, request_id: RequestId, params: acp.ReleaseTerminalRequest
    ) -> acp.ReleaseTerminalResponse: ...

    async def create_elicitation(
        self, request_id: RequestId, params: acp.CreateElicitationRequest
    ) -> acp.CreateElicitationResponse: ...


P = TypeVar("P", bound=AgentRequestParams)
Serve = Callable[[Client, RequestId, AgentRequestParams], Awaitable[ClientResult]]


class Route:
    """One method of the table: its params' type, ``decode`` (raw params into that type;
    msgspec's errors for params that do not fit) and ``serve``, which hands params of that
    type to the `Client` method of the request (`TypeError` for any other)."""

    __slots__ = ("decode", "params", "serve")

    def __init__(
        self,
        params: type[msgspec.Struct],
        decode: Callable[[bytes], AgentRequestParams],
        serve: Serve,
    ) -> None:
        self.params = params
        self.decode = decode
        self.serve = serve


def _route(
    params: type[P], handler: Callable[[Client, RequestId, P], Awaitable[ClientResult]]
) -> Route:
    async def serve(
        client: Client, request_id: RequestId, given: AgentRequestParams
    ) -> ClientResult:
        if not isinstance(given, params):
            raise TypeError(f"{type(given).__name__} is not {params.__name__}")
        return await handler(client, request_id, given)

    return Route(params, msgspec.json.Decoder(params).decode, serve)


_M = acp.CLIENT_METHODS
ROUTES: dict[str, Route] = {
    _M["session_request_permission"]: _route(
        acp.RequestPermissionRequest,
        lambda client, request_id, params: client.request_permission(request_id, params),
    ),
    _M["fs_read_text_file"]: _route(
        acp.ReadTextFileRequest,
        lambda client, request_id, params: client.read_text_file(request_id, params),
    ),
    _M["fs_write_text_file"]: _route(
        acp.WriteTextFileRequest,
        lambda client, request_id, params: client.write_text_file(request_id, params),
    ),
    _M["terminal_create"]: _route(
        acp.CreateTerminalRequest,
        lambda client, request_id, params: client.create_terminal(request_id, params),
    ),
    _M["terminal_output"]: _route(
        acp.TerminalOutputRequest,
        lambda client, request_id, params: client.terminal_output(request_id, params),
    ),
    _M["terminal_wait_for_exit"]: _route(
        acp.WaitForTerminalExitRequest,
        lambda client, request_id, params: client.wait_for_terminal_exit(request_id, params),
    ),
    _M["terminal_kill"]: _route(
        acp.KillTerminalRequest,
        lambda client, request_id, params: client.kill_terminal(request_id, params),
    ),
    _M["terminal_release"]: _route(
        acp.ReleaseTerminalRequest,
        lambda client, request_id, params: client.release_terminal(request_id, params),
    ),
    _M["elicitation_create"]: _route(
        acp.CreateElicitationRequest,
        lambda client, request_id, params: client.create_elicitation(request_id, params),
    ),
}
"""Every request of the agent's a client may serve (``elicitation/complete`` is a
notification, no request)."""
