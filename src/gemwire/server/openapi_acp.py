"""The ACP transport's routes as the OpenAPI document describes them: the same three
methods of one endpoint (`AcpEndpoint`) at ``/acp`` (the agent a query parameter) and at
``/acp/{agent}``."""

from __future__ import annotations

from collections.abc import Collection

from gemwire.server.openapi_shapes import (
    ACP_AGENT,
    ACP_AGENT_QUERY,
    ACP_CONNECTION,
    ACP_MESSAGE,
    ACP_SESSION,
    SSE,
    Operation,
    Param,
)

__all__ = ("acp_operation",)


def acp_operation(method: str, path_params: Collection[str]) -> Operation | None:
    """The ACP transport's ``method`` at a route whose path has ``path_params`` (the agent
    in the path, or in the query)."""
    if "agent" in path_params:
        agent, stream = ACP_AGENT, "An ACP agent: a WebSocket, or a Streamable HTTP stream"
    else:
        agent = ACP_AGENT_QUERY
        stream = "An ACP agent (`?agent=`): a WebSocket, or a Streamable HTTP stream"
    return _operations(agent, stream).get(method)


def _operations(agent: Param, stream: str) -> dict[str, Operation]:
    return {
        "GET": Operation(
            stream,
            "The Agent Client Protocol's transport RFD (docs/server.md says where it departs). "
            "A WebSocket upgrade starts one agent for the socket: each text frame is one "
            "JSON-RPC message, both ways; the socket closing stops the agent (1001 at shutdown "
            "or after `--idle-timeout` with no message and no turn, 1009 for a message over "
            "64 MiB; refused with 1008 for a wrong token or Origin). "
            "Otherwise (`Accept: text/event-stream`), the SSE stream of a Streamable HTTP "
            "connection (`Acp-Connection-Id`), or of one of its sessions (`Acp-Session-Id`): "
            "the agent's messages, one an event; one reader at a time (409); the connection's "
            "stream closing stops the agent.",
            params=(agent, ACP_CONNECTION, ACP_SESSION),
            response={SSE: {"type": "string", "description": "`data: <JSON-RPC message>`"}},
            errors=(400, 404, 406, 409),
            tag="acp",
        ),
        "POST": Operation(
            "Send an ACP message (Streamable HTTP)",
            "`initialize` starts the connection's agent and is answered in the body, with the "
            "`Acp-Connection-Id` header; every other message needs that header (and "
            "`Acp-Session-Id` for a method on a session) and is answered 202, its answer "
            "coming on a stream. A message naming a session's folder outside the roots is "
            "answered on the stream with its JSON-RPC error (-32602), and never reaches the "
            "agent; a batch is 501. The body may be up to 64 MiB, the stdio line cap (413 "
            "above it). Past `--max-sessions` connections at once, `initialize` is 503.",
            params=(agent, ACP_CONNECTION, ACP_SESSION),
            body={"application/json": ACP_MESSAGE},
            response={"application/json": ACP_MESSAGE},
            errors=(400, 404, 413, 415, 501, 502, 503, 504),
            tag="acp",
        ),
        "DELETE": Operation(
            "End an ACP connection (Streamable HTTP): its agent stops",
            params=(agent, ACP_CONNECTION),
            status=202,
            errors=(400, 404),
            tag="acp",
        ),
    }
