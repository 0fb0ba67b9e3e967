"""Serving the agent's requests: permissions, elicitations, the confined file system,
terminals.

`AgentRequestServer` is the typed `Client` of ``protocol.acp.routes``: a request reaches the
method of its route with its exact params type. Each request is served by a task of its
own (the client starts it), so a slow
permission prompt never stops the stream. A refusal (`AccessDenied`) is answered with
its JSON-RPC error and a ``notice`` on the session; a bug in a handler is answered
"Internal error", never left unanswered.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import anyio
import msgspec

from gemwire.errors import AccessDenied
from gemwire.events import Notice
from gemwire.protocol.acp import AgentRequest
from gemwire.protocol.acp.routes import ROUTES
from gemwire.runners.acp.elicitation import (
    ElicitationAnswer,
    ElicitationHandler,
    ElicitationRequest,
    checked_answer,
)
from gemwire.runners.acp.files import RESOURCE_NOT_FOUND
from gemwire.runners.acp.options import AcpOptions
from gemwire.runners.acp.peer import AgentPeer
from gemwire.runners.acp.session import AcpSession
from gemwire.runners.acp.terminals import Terminals
from gemwire.wire import acp
from gemwire.wire.jsonrpc import INTERNAL_ERROR, METHOD_NOT_FOUND, RequestId

__all__ = ("AgentRequestServer",)


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentRequestServer:
    """Answers one client's agent requests; ``session`` finds a session by id (raising
    `AccessDenied` for an unknown one), ``broadcast`` reports what belongs to no session."""

    peer: AgentPeer
    options: AcpOptions
    terminals: Terminals | None
    session: Callable[[str], AcpSession]
    notice: Callable[[str], Notice]
    broadcast: Callable[[Notice], None]
    elicitation_handler: ElicitationHandler

    async def serve(self, request: AgentRequest) -> None:
        """Answer ``request`` by its route (`ROUTES`): the `Client` method of its method."""
        peer = self.peer
        try:
            result = await ROUTES[request.method].serve(self, request.id, request.params)
        except AccessDenied as exc:
            message = peer.mask(str(exc))
            if exc.code != RESOURCE_NOT_FOUND:  # a missing file is an answer, not a denial
                self._report(request, f"denied the agent's {request.method}: {message}")
            data = {"path": exc.path} if exc.path else None
            await peer.reply_error(request.id, exc.code, message, data)
        except Exception as exc:  # noqa: BLE001 - a bug in a handler must not leave the agent waiting
            self._report(request, f"failed to serve the agent's {request.method}: {exc!r}")
            await peer.reply_error(request.id, INTERNAL_ERROR, "Internal error")
        else:
            await peer.reply(request.id, result)

    def _report(self, request: AgentRequest, message: str) -> None:
        notice = self.notice(self.peer.mask(message))
        try:
            session = self.session(request.params.session_id or "")
        except AccessDenied:
            self.broadcast(notice)
        else:
            session.emit([notice])

    async def request_permission(
        self, request_id: RequestId, params: acp.RequestPermissionRequest
    ) -> acp.RequestPermissionResponse:
        return await self.session(params.session_id).answer_permission(str(request_id), params)

    async def read_text_file(
        self, request_id: RequestId, params: acp.ReadTextFileRequest
    ) -> acp.ReadTextFileResponse:
        if not self.options.serve_reads:
            raise AccessDenied(
                "this client does not offer fs/read_text_file", code=METHOD_NOT_FOUND
            )
        files = self.session(params.session_id).files
        text = await anyio.to_thread.run_sync(
            lambda: files.read_text(params.path, line=params.line, limit=params.limit),
            abandon_on_cancel=True,
        )
        return acp.ReadTextFileResponse(content=text)

    async def write_text_file(
        self, request_id: RequestId, params: acp.WriteTextFileRequest
    ) -> acp.WriteTextFileResponse:
        if not self.options.serve_writes:
            raise AccessDenied(
                "this client does not offer fs/write_text_file", code=METHOD_NOT_FOUND
            )
        files = self.session(params.session_id).files
        await anyio.to_thread.run_sync(
            files.write_text, params.path, params.content, abandon_on_cancel=True
        )
        return acp.WriteTextFileResponse()

    async def create_terminal(
        self, request_id: RequestId, params: acp.CreateTerminalRequest
    ) -> acp.CreateTerminalResponse:
        return await self._terminals(params.session_id).create(params)

    async def terminal_output(
        self, request_id: RequestId, params: acp.TerminalOutputRequest
    ) -> acp.TerminalOutputResponse:
        return await self._terminals(params.session_id).output(params)

    async def wait_for_terminal_exit(
        self, request_id: RequestId, params: acp.WaitForTerminalExitRequest
    ) -> acp.WaitForTerminalExitResponse:
        return await self._terminals(params.session_id).wait_for_exit(params)

    async def kill_terminal(
        self, request_id: RequestId, params: acp.KillTerminalRequest
    ) -> acp.KillTerminalResponse:
        await self._terminals(params.session_id).kill(params)
        return acp.KillTerminalResponse()

    async def release_terminal(
        self, request_id: RequestId, params: acp.ReleaseTerminalRequest
    ) -> acp.ReleaseTerminalResponse:
        await self._terminals(params.session_id).release(params)
        return acp.ReleaseTerminalResponse()

    def _terminals(self, session_id: str) -> Terminals:
        """The terminals, for a session of this client (`AccessDenied` otherwise)."""
        if self.terminals is None:
            raise AccessDenied("this client does not offer terminals", code=METHOD_NOT_FOUND)
        self.session(session_id)
        return self.terminals

    async def create_elicitation(
        self, request_id: RequestId, params: acp.CreateElicitationRequest
    ) -> acp.CreateElicitationResponse:
        return await self._elicit(str(request_id), params)

    async def _elicit(
        self, request_id: str, params: acp.CreateElicitationRequest
    ) -> acp.CreateElicitationResponse:
        """Ask the handler (a mode this client does not know is declined unasked); the
        answer is told in an ``info`` notice."""
        mask = self.peer.mask
        message = mask(params.message)
        answer = ElicitationAnswer(action="decline")
        if params.mode in ("form", "url"):
            schema = params.requested_schema or {}
            properties, required = schema.get("properties"), schema.get("required")
            request = ElicitationRequest(
                request_id=request_id,
                session_id=params.session_id,
                mode=params.mode,  # type: ignore[arg-type]
                message=message,
                fields=dict(properties) if isinstance(properties, dict) else {},
                required=[str(name) for name in required] if isinstance(required, list) else [],
                url=params.url,
                tool_call_id=params.tool_call_id,
            )
            try:
                answer = checked_answer(request, await self.elicitation_handler(request))
            except Exception as exc:  # noqa: BLE001 - the host's code: decline, and say why
                self._tell(params.session_id, f"the elicitation handler failed: {exc!r}")
        self._tell(
            params.session_id,
            f"the agent asked for input ({params.mode}): {message!r}; answered {answer.action}",
            severity="info",
        )
        return acp.CreateElicitationResponse(action=answer.action, content=answer.content)

    def _tell(
        self,
        session_id: str | None,
        message: str,
        severity: Literal["info", "warning"] = "warning",
    ) -> None:
        notice = msgspec.structs.replace(self.notice(message), severity=severity)
        try:
            session = self.session(session_id or "")
        except AccessDenied:
            self.broadcast(notice)
        else:
            session.emit([msgspec.structs.replace(notice, session_id=session.session_id)])
