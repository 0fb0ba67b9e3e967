"""The client side of an ACP connection, sans-IO: JSON-RPC messages -> typed ACP items.

`AcpClientConnection` sits on `JsonRpcConnection` and knows ACP's methods: it decodes
``session/update`` into the tagged union of its kinds (``acp.update.SessionUpdate``), the
agent's requests (``session/request_permission``, ``fs/*``, ``terminal/*``) into the
params types of their `ROUTES`, and
the results of the client's own requests into their response types. What it cannot
type never raises: a malformed optional part of an update, a request or a result is
dropped, a `ProtocolViolation` saying so (``lenient``); an update of an unknown kind, or
whose required part does not fit, is an `UnknownUpdate`, a request it cannot serve an
`UnservedRequest` (the caller answers it with an error), an unreadable result an
`AgentError` plus a `ProtocolViolation`. A message holding lone
surrogates is read with U+FFFD for each, after a `LoneSurrogates` record.

The typed requests of the client are in ``calls``, the items in ``items``, the agent's
requests and the typed `Client` that serves them in ``routes``, one session's
ordering rules in ``session_state``; every name is imported from here.

    >>> conn = AcpClientConnection()
    >>> conn.receive_data(
    ...     b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s",'
    ...     b'"update":{"sessionUpdate":"agent_message_chunk",'
    ...     b'"content":{"type":"text","text":"Hi"}}}}\\n'
    ... )
    [SessionUpdate(session_id='s', update=AgentMessageChunk(content=TextContent(text='Hi')))]
"""

from __future__ import annotations

from gemwire.protocol.acp import calls, connection, items, routes, session_state
from gemwire.protocol.acp.calls import *
from gemwire.protocol.acp.connection import *
from gemwire.protocol.acp.items import *
from gemwire.protocol.acp.routes import *
from gemwire.protocol.acp.session_state import *
from gemwire.protocol.framing import OversizedLine
from gemwire.protocol.jsonrpc import LoneSurrogates, ProtocolViolation

__all__: list[str] = ["LoneSurrogates", "OversizedLine", "ProtocolViolation"]
__all__ += connection.__all__
__all__ += calls.__all__
__all__ += items.__all__
__all__ += routes.__all__
__all__ += session_state.__all__
