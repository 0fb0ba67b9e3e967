"""``gemwire agent antigravity``: Antigravity as an ACP agent on stdin and stdout.

The JSON-RPC side of the adapter: each request the client sends is handled in a task of
its own (a ``session/cancel`` is read while a prompt runs), the agent's own requests
(``session/request_permission``) wait for their answers here, and every session's harness
is ended when the client closes stdin, or on SIGTERM, SIGINT or SIGHUP. Methods:
``initialize``, ``authenticate``, ``session/new|load|resume|list|close|prompt|cancel|
set_mode|set_model``.
"""

from __future__ import annotations

import os
import signal
import sys
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from gemwire import __version__
from gemwire._portable import HANGUP
from gemwire.antigravity.session import AgentSession, Client, SessionBusy, TurnFailed
from gemwire.antigravity.settings import Settings, app_data_dir
from gemwire.antigravity.stdio import Stdio
from gemwire.errors import GemwireError
from gemwire.protocol.jsonrpc import (
    ErrorResponse,
    JsonRpcConnection,
    Notification,
    Request,
    Response,
)
from gemwire.wire import acp
from gemwire.wire.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND

if TYPE_CHECKING:
    from gemwire.sessions.antigravity import SavedConversation

__all__ = ("AGENT_NAME", "run_agent")

AGENT_NAME = "antigravity"
"""The ``agentInfo.name`` the adapter gives."""

AUTH_REQUIRED = -32000
"""ACP's ``auth_required`` error code."""


class _RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _decode(params: bytes | None, kind: type[Any]) -> Any:
    try:
        return msgspec.json.decode(params or b"{}", type=kind)
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise _RpcError(INVALID_PARAMS, f"invalid params: {exc}") from exc


def _prompt_text(blocks: list[Any]) -> str:
    """A prompt's blocks as the one text the harness takes."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, acp.TextContent):
            parts.append(block.text)
        elif isinstance(block, acp.ResourceLink):
            parts.append(f"@{block.uri}")
        elif isinstance(block, acp.EmbeddedResource) and block.resource.text is not None:
            parts.append(f"{block.resource.uri}:\n{block.resource.text}")
        else:
            raise _RpcError(INVALID_PARAMS, f"unsupported prompt content: {type(block).__name__}")
    return "\n".join(parts)


class AntigravityAgent:
    """The ACP agent: its sessions, and the client it answers."""

    def __init__(self, stdio: Stdio, environ: Mapping[str, str]) -> None:
        self._stdio = stdio
        self._environ = environ
        self._rpc = JsonRpcConnection()
        self._sessions: dict[str, AgentSession] = {}
        self._waiting: dict[Any, tuple[anyio.Event, list[bytes | None]]] = {}
        # Tests keep the model's network tools off (docs/antigravity.md).
        self._network_tools = environ.get("GEMWIRE_ANTIGRAVITY_NETWORK_TOOLS", "1") != "0"

    async def serve(self) -> None:
        """Until the client closes stdin; then every session's harness is ended."""
        try:
            async with anyio.create_task_group() as tasks:
                while data := await self._stdio.read():
                    for item in self._rpc.receive_data(data):
                        self._receive(item, tasks)
                tasks.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                for session in list(self._sessions.values()):
                    try:
                        await session.close()
                    except GemwireError as exc:  # said, and the other sessions still end
                        sys.stderr.write(f"gemwire agent antigravity: {exc}\n")

    def _receive(self, item: Any, tasks: anyio.abc.TaskGroup) -> None:
        if isinstance(item, Request):
            tasks.start_soon(self._answer, item)
        elif isinstance(item, Notification) and item.method == "session/cancel":
            cancel = _decode_quietly(item.params, acp.CancelNotification)
            session = self._sessions.get(cancel.session_id) if cancel else None
            if session is not None:
                tasks.start_soon(self._cancel, session)
        elif isinstance(item, Response | ErrorResponse):
            waiting = self._waiting.pop(item.id, None)
            if waiting is not None:
                waiting[1].append(item.result if isinstance(item, Response) else None)
                waiting[0].set()

    async def _cancel(self, session: AgentSession) -> None:
        try:
            await session.cancel()
        except GemwireError as exc:  # a notification has no answer: said on stderr
            sys.stderr.write(f"gemwire agent antigravity: {exc}\n")

    async def _answer(self, request: Request) -> None:
        try:
            result = await self._call(request.method, request.params)
        except _RpcError as exc:
            data = self._rpc.send_error(request.id, exc.code, str(exc))
        except (GemwireError, SessionBusy, TurnFailed) as exc:
            data = self._rpc.send_error(request.id, INTERNAL_ERROR, str(exc))
        else:
            data = self._rpc.send_result(request.id, result)
        await self._stdio.write(data)

    async def _notify(self, session_id: str, update: dict[str, Any]) -> None:
        params = {"sessionId": session_id, "update": update}
        await self._stdio.write(self._rpc.send_notification("session/update", params))

    async def _request_permission(self, request: acp.RequestPermissionRequest) -> bytes:
        request_id, data = self._rpc.send_request("session/request_permission", request)
        event = anyio.Event()
        answer: list[bytes | None] = []
        self._waiting[request_id] = (event, answer)
        await self._stdio.write(data)
        await event.wait()
        return answer[0] or b"{}"

    def _session(self, session_id: str) -> AgentSession:
        session = self._sessions.get(session_id)
        if session is None:
            raise _RpcError(INVALID_PARAMS, f"no session {session_id!r}")
        return session

    async def _open(self, session_id: str, cwd: str, *, resume: bool) -> AgentSession:
        if session_id in self._sessions:
            raise _RpcError(INVALID_PARAMS, f"session {session_id!r} is already open")
        try:
            settings = Settings.from_environ(self._environ)
        except GemwireError as exc:
            raise _RpcError(AUTH_REQUIRED, str(exc)) from exc

        async def notify(update: dict[str, Any]) -> None:
            await self._notify(session_id, update)

        client = Client(notify=notify, request_permission=self._request_permission)
        session = AgentSession(session_id, cwd, settings, client, network_tools=self._network_tools)
        await session.start(resume=resume)
        self._sessions[session_id] = session
        return session

    async def _call(self, method: str, params: bytes | None) -> Any:
        if method == "initialize":
            return self._initialize()
        if method == "authenticate":
            return {}
        if method == "session/new":
            new = _decode(params, acp.NewSessionRequest)
            session = await self._open(str(uuid.uuid4()), new.cwd, resume=False)
            return acp.NewSessionResponse(
                session_id=session.session_id, modes=session.modes(), models=session.models()
            )
        if method in ("session/load", "session/resume"):
            load = _decode(params, acp.LoadSessionRequest)
            if not self._saved(load.session_id):
                raise _RpcError(INVALID_PARAMS, f"no saved session {load.session_id!r}")
            session = await self._open(load.session_id, load.cwd, resume=True)
            if method == "session/load":
                await session.replay()
            return acp.LoadSessionResponse(modes=session.modes(), models=session.models())
        if method == "session/list":
            listed = _decode(params, acp.ListSessionsRequest)
            return self._list(listed.cwd)
        if method == "session/close":
            closed = _decode(params, acp.CloseSessionRequest)
            session = self._session(closed.session_id)
            del self._sessions[closed.session_id]
            await session.close()
            return {}
        if method == "session/prompt":
            prompt = _decode(params, acp.PromptRequest)
            return await self._session(prompt.session_id).prompt(_prompt_text(prompt.prompt))
        if method == "session/set_mode":
            mode = _decode(params, acp.SetSessionModeRequest)
            if not self._session(mode.session_id).set_mode(mode.mode_id):
                raise _RpcError(INVALID_PARAMS, f"no mode {mode.mode_id!r}")
            return {}
        if method == "session/set_model":
            model = _decode(params, acp.SetSessionModelRequest)
            await self._session(model.session_id).set_model(model.model_id)
            return {}
        raise _RpcError(METHOD_NOT_FOUND, f"method not found: {method}")

    def _initialize(self) -> acp.InitializeResponse:
        return acp.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=acp.AgentCapabilities(
                load_session=True,
                prompt_capabilities=acp.PromptCapabilities(embedded_context=True),
                session_capabilities=acp.SessionCapabilities(list={}, resume={}, close={}),
            ),
            auth_methods=[
                acp.AuthMethod(
                    id="gemini-api-key",
                    name="Gemini API key",
                    description="Set GEMINI_API_KEY (or GOOGLE_API_KEY) in the agent's environment",
                )
            ],
            agent_info=acp.Implementation(
                name=AGENT_NAME, title="Antigravity (gemwire)", version=__version__
            ),
        )

    def _saved(self, session_id: str) -> bool:
        return any(saved.session_id == session_id for saved in self._saved_list())

    def _saved_list(self) -> list[SavedConversation]:
        # Here, not at the top: gemwire.sessions takes the adapter's start twice as long.
        from gemwire.sessions.antigravity import saved_conversations

        return saved_conversations(app_data_dir(self._environ))

    def _list(self, cwd: str | None) -> acp.ListSessionsResponse:
        sessions = [
            acp.SessionInfo(
                session_id=saved.session_id,
                cwd=saved.cwd or "",
                title=saved.title,
                updated_at=saved.updated_at,
            )
            for saved in self._saved_list()
            if cwd is None or saved.cwd == cwd
        ]
        return acp.ListSessionsResponse(sessions=sessions)


def _decode_quietly(params: bytes | None, kind: type[Any]) -> Any:
    try:
        return msgspec.json.decode(params or b"{}", type=kind)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None


async def run_agent(stdio: Stdio, environ: Mapping[str, str] | None = None) -> None:
    """Serves one client until it closes stdin, or a signal ends the adapter."""
    agent = AntigravityAgent(stdio, os.environ if environ is None else environ)
    async with anyio.create_task_group() as tasks:

        async def stop_on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, *HANGUP) as got:
                async for _ in got:
                    tasks.cancel_scope.cancel()

        tasks.start_soon(stop_on_signal)
        await agent.serve()
        tasks.cancel_scope.cancel()
