"""`ClientRequests`: what an `AcpClient` asks of its agent, the part of the client that
sends requests: authentication, opening sessions (new, load, resume, fork, continue),
listing and deleting saved ones, logging out.

Each request goes through the client's peer (`AgentPeer`) with the client's timeout; one
that needs the agent's login is sent again after ``authenticate`` (``options.auth_method``).
A session opened is registered with the router before its first update can be lost, and put
in its agent's asking mode where the permission answers need it (`asking`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gemwire.errors import AgentRequestFailed
from gemwire.protocol import acp as protocol
from gemwire.runners.acp.asking import hold_asking_mode
from gemwire.runners.acp.options import AcpOptions, McpServer
from gemwire.runners.acp.peer import AgentPeer
from gemwire.runners.acp.quirks import AgentQuirks
from gemwire.runners.acp.router import SessionRouter
from gemwire.runners.acp.session import (
    AcpSession,
    OpenedSession,
    SessionContext,
    session_params,
)
from gemwire.wire import acp
from gemwire.wire.jsonrpc import METHOD_NOT_FOUND

__all__ = ("ClientRequests",)

_AUTH_REQUIRED = -32000


class ClientRequests:
    """The requests of `AcpClient` (its base): they use the client's options, peer, router,
    session context, quirks and credentials, set up when it starts."""

    options: AcpOptions
    initialize_response: acp.InitializeResponse | None
    _asks: bool
    _credentials: dict[str, object]
    _peer: AgentPeer
    _router: SessionRouter
    _context: SessionContext
    _quirks: AgentQuirks

    @property
    def agent_info(self) -> acp.Implementation | None:
        return self.initialize_response.agent_info if self.initialize_response else None

    @property
    def agent_capabilities(self) -> acp.AgentCapabilities:
        response = self.initialize_response
        return response.agent_capabilities if response else acp.AgentCapabilities()

    async def authenticate(self, method_id: str) -> None:
        """Authenticate with one of `auth_methods`, with the client's credentials."""
        params: dict[str, object] = {"methodId": method_id}
        if self._credentials:
            params["_meta"] = self._credentials
        await self._call(protocol.authenticate(params))

    async def new_session(
        self,
        *,
        cwd: str | None = None,
        include_directories: Sequence[str] | None = None,
        mcp_servers: Sequence[McpServer] | None = None,
    ) -> AcpSession:
        """Start a session in ``cwd`` (default: ``options.cwd``, else here); emits
        ``session_started``. Sessions may be opened concurrently."""
        folder, extra, params = self._session_params(cwd, include_directories, mcp_servers)
        call = protocol.new_session(acp.NewSessionRequest(**params))
        response = await self._request_session(call)
        return await self._held(self._opened(response.session_id, folder, extra, response))

    async def load_session(
        self,
        session_id: str,
        *,
        cwd: str | None = None,
        include_directories: Sequence[str] | None = None,
        mcp_servers: Sequence[McpServer] | None = None,
    ) -> AcpSession:
        """Load a saved session (the agent must advertise ``loadSession``). Its history
        comes as events marked ``replay`` (an agent's quirks may wait for it to end,
        `quirks.AgentQuirks`)."""
        protocol.require_capability(self.agent_capabilities, "session/load")
        folder, extra, params = self._session_params(cwd, include_directories, mcp_servers)
        session = AcpSession(self._context, session_id, folder, extra, None)
        session.normalizer.begin_replay()
        self._register(session, None)
        environment = self.options.environment()

        def notify(message: str) -> None:
            session.emit([self._context.notice(message, session_id, severity="info")])

        call = protocol.load_session(acp.LoadSessionRequest(session_id=session_id, **params))
        try:
            await self._quirks.before_load(environment, folder, session_id, notify)
            async with self._quirks.opening_session():
                response = await self._call_with_auth(call)
        except AgentRequestFailed as exc:
            self._router.forget(session_id)
            failure = self._quirks.load_failed(exc, folder, session_id)
            if failure is exc:
                raise
            raise failure from exc
        except BaseException:
            self._router.forget(session_id)
            raise
        session.loaded(response)
        await self._quirks.settle_replay(lambda: session.updates)
        warning = await self._quirks.protect_loaded_session(environment, folder, session_id)
        if warning is not None:
            session.emit([self._context.notice(warning, session_id)])
        return await self._held(session)

    async def resume_session(
        self,
        session_id: str,
        *,
        cwd: str | None = None,
        include_directories: Sequence[str] | None = None,
        mcp_servers: Sequence[McpServer] | None = None,
    ) -> AcpSession:
        """Continue a saved session without replaying its history (the agent must
        advertise ``sessionCapabilities.resume``); emits ``session_started``, as
        `new_session` does. `continue_session` falls back to ``session/load``."""
        protocol.require_capability(self.agent_capabilities, "session/resume")
        folder, extra, params = self._session_params(cwd, include_directories, mcp_servers)
        call = protocol.resume_session(acp.ResumeSessionRequest(session_id=session_id, **params))
        response = await self._request_session(call)
        return await self._held(self._opened(session_id, folder, extra, response))

    async def fork_session(
        self,
        session_id: str,
        *,
        cwd: str | None = None,
        include_directories: Sequence[str] | None = None,
        mcp_servers: Sequence[McpServer] | None = None,
    ) -> AcpSession:
        """A new session that starts with a copy of ``session_id``'s history (the agent
        must advertise ``sessionCapabilities.fork``, unstable upstream); emits its
        ``session_started``. The original session is left as it was."""
        protocol.require_capability(self.agent_capabilities, "session/fork")
        folder, extra, params = self._session_params(cwd, include_directories, mcp_servers)
        call = protocol.fork_session(acp.ForkSessionRequest(session_id=session_id, **params))
        response = await self._request_session(call)
        return await self._held(self._opened(response.session_id, folder, extra, response))

    async def continue_session(
        self,
        session_id: str,
        *,
        cwd: str | None = None,
        include_directories: Sequence[str] | None = None,
        mcp_servers: Sequence[McpServer] | None = None,
    ) -> AcpSession:
        """Continue a saved session: `resume_session` where the agent offers
        ``session/resume``, else `load_session` (its history comes as ``replay`` events)."""
        if not (self.offers("session/resume") or self.offers("session/load")):
            raise AgentRequestFailed(
                "the agent advertises neither session/resume nor session/load: it cannot "
                "continue a saved session",
                method="session/resume",
                code=METHOD_NOT_FOUND,
            )
        reopen = self.resume_session if self.offers("session/resume") else self.load_session
        return await reopen(
            session_id, cwd=cwd, include_directories=include_directories, mcp_servers=mcp_servers
        )

    def offers(self, method: str) -> bool:
        """The agent offers ``method`` (an optional one only if it advertised it in
        ``initialize``: ``session/load``, ``session/resume``, ...)."""
        return protocol.advertises(self.agent_capabilities, method)

    async def list_sessions(self, *, cwd: str | None = None) -> list[acp.SessionInfo]:
        """The agent's saved sessions (only if it advertises ``session/list``)."""
        protocol.require_capability(self.agent_capabilities, "session/list")
        sessions: list[acp.SessionInfo] = []
        cursor: str | None = None
        while True:
            page = await self._call(
                protocol.list_sessions(acp.ListSessionsRequest(cwd=cwd, cursor=cursor))
            )
            sessions += page.sessions
            if not page.next_cursor:
                return sessions
            cursor = page.next_cursor

    async def delete_session(self, session_id: str) -> None:
        """Delete a saved session (only if the agent advertises ``session/delete``); the
        client forgets it too if it had it open."""
        protocol.require_capability(self.agent_capabilities, "session/delete")
        await self._call(protocol.delete_session(acp.DeleteSessionRequest(session_id=session_id)))
        self._router.forget(session_id)

    async def logout(self) -> None:
        """End the agent's authenticated session (only if it advertises ``auth.logout``)."""
        protocol.require_capability(self.agent_capabilities, "logout")
        await self._call(protocol.logout())

    def _session_params(
        self,
        cwd: str | None,
        include_directories: Sequence[str] | None,
        mcp_servers: Sequence[McpServer] | None,
    ) -> tuple[str, tuple[str, ...], dict[str, Any]]:
        folder, extra, params = session_params(
            self.options, self.agent_capabilities, cwd, include_directories, mcp_servers
        )
        if extra and "additional_directories" not in params:
            message = (
                "the agent does not support additional directories; the client "
                "still serves files in them"
            )
            self._router.hold(self._context.notice(message))
        return folder, extra, params

    async def _request_session(self, call: protocol.Call[protocol.R]) -> protocol.R:
        """``session/new``, ``resume`` or ``fork``: the session's updates that come before
        the answer wait for it (`SessionRouter.opening`)."""
        self._router.opening += 1
        try:
            async with self._quirks.opening_session():
                return await self._call_with_auth(call)
        finally:
            self._router.opening -= 1

    def _opened(
        self,
        session_id: str,
        folder: str,
        extra: tuple[str, ...],
        response: OpenedSession,
    ) -> AcpSession:
        session = AcpSession(self._context, session_id, folder, extra, response)
        # Its model: models.currentModelId, else the model config option (claude-agent-acp's).
        new = isinstance(response, acp.NewSessionResponse)
        self._register(session, session.current_model, new=new)
        return session

    async def _held(self, session: AcpSession) -> AcpSession:
        """``session``, in its agent's asking mode where the answers need it (`asking`)."""
        await hold_asking_mode(
            session, asks=self._asks, override=self.options.mode, command=self.options.command
        )
        return session

    def _register(self, session: AcpSession, model: str | None, *, new: bool = False) -> None:
        info = self.agent_info
        started = session.normalizer.started(
            cwd=session.cwd, model=model, agent_version=info.version if info else None, new=new
        )
        self._router.register(session, started)

    # Requests to the agent ----------------------------------------------------------

    async def _call(self, call: protocol.Call[protocol.R]) -> protocol.R:
        self._router.wake()  # the answer must be read even if a consumer is slow
        return await self._peer.call(call, self.options.request_timeout)

    async def _call_with_auth(self, call: protocol.Call[protocol.R]) -> protocol.R:
        try:
            return await self._call(call)
        except AgentRequestFailed as exc:
            if exc.code != _AUTH_REQUIRED or not self.options.auth_method:
                raise
        await self.authenticate(self.options.auth_method)
        return await self._call(call)
