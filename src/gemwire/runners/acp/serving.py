"""Serving the agent's requests: permissions, elicitations, the confined file system,
terminals.

Each request is served by a task of its own (the client starts it), so a slow
permission prompt never stops the stream. A refusal (`AccessDenied`) is answered with
its JSON-RPC error and a ``notice`` on the session; a bug in a handler is answered
"Internal error", never left unanswered.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import msgspec

from gemwire.errors import AccessDenied
from gemwire.events import Notice
from gemwire.protocol.acp import AgentRequest
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
from gemwire.wire.jsonrpc import INTERNAL_ERROR, METHOD_NOT_FOUND

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
        peer = self.peer
        try:
            result = await self._handle(request)
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
            session = self.session(getattr(request.params, "session_id", ""))
        except AccessDenied:
            self.broadcast(notice)
        else:
            session.emit([notice])

    async def _handle(self, request: AgentRequest) -> Any:
        params = request.params
        method = request.method
        if method == "session/request_permission":
            return await self.session(params.session_id).answer_permission(str(request.id), params)
        if method == "elicitation/create":
            return await self._elicit(str(request.id), params)
        if method == "fs/read_text_file":
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
        if method == "fs/write_text_file":
            if not self.options.serve_writes:
                raise AccessDenied(
                    "this client does not offer fs/write_text_file", code=METHOD_NOT_FOUND
                )
            files = self.session(params.session_id).files
            await anyio.to_thread.run_sync(
                files.write_text, params.path, params.content, abandon_on_cancel=True
            )
            return {}
        terminals = self.terminals
        if terminals is None:
            raise AccessDenied("this client does not offer terminals", code=METHOD_NOT_FOUND)
        self.session(params.session_id)
        match method:
            case "terminal/create":
                return await terminals.create(params)
            case "terminal/output":
                return await terminals.output(params)
            case "terminal/wait_for_exit":
                return await terminals.wait_for_exit(params)
            case "terminal/kill":
                await terminals.kill(params)
            case _:
                await terminals.release(params)
        return {}

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
            request = ElicitationRequest(
                request_id=request_id,
                session_id=params.session_id,
                mode=params.mode,  # type: ignore[arg-type]
                message=message,
                fields=dict(schema.get("properties") or {}),
                required=[str(name) for name in schema.get("required") or []],
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
