"""Drive any ACP agent (``gemini --acp``, ``claude-code-acp``, ...) as a client.

    async with AcpClient(AcpOptions(command=("gemini", "--acp"))) as client:
        session = await client.new_session()
        async with session.prompt("fix the failing test") as turn:
            async for event in turn:
                print(event.type)
        print(turn.result.answer)

The client reads and writes the agent's messages only through an `AgentChannel`: by
default the agent process of ``options.command`` (`ProcessChannel`: its own process
group, stopped with its whole tree on exit), or the channel it is given (an agent in
this process over `memory_channel_pair`, ...). It owns a task group: one task reads the
channel through the sans-IO `AcpClientConnection` (`AgentPeer`), and each request the agent
makes (permission, file, terminal) is served by a task of its own (`AgentRequestServer`).
One agent process serves many sessions: the reader routes each session's updates to
that session's queue, so turns of different sessions run at once, each with exactly its
own events and exactly one ``turn_completed``.

A consumer slower than the agent holds the agent back (the reader stops reading once
`MAX_QUEUED_EVENTS` wait for a turn being consumed) — except while a request of the
caller (``set_mode``, ``new_session``, ...) waits for its answer, which must be read.
Consume turns that run at once concurrently (one task each).

What the client asks of the agent (sessions opened, loaded, listed, ...) is its base,
`ClientRequests`; this module starts and stops the agent and wires the parts together.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, Self

import anyio

from gemwire._normalize.masking import Masker, known_secrets
from gemwire._version import __version__
from gemwire.errors import sole_exception
from gemwire.events import Event
from gemwire.protocol import acp as protocol
from gemwire.protocol.acp import AcpClientConnection
from gemwire.runners.acp.channel import AgentChannel
from gemwire.runners.acp.client_requests import ClientRequests
from gemwire.runners.acp.elicitation import ElicitationHandler, decline_elicitation
from gemwire.runners.acp.options import AcpOptions
from gemwire.runners.acp.peer import CLOSE_GRACE, AgentPeer
from gemwire.runners.acp.permissions import PermissionHandler, permission_preset
from gemwire.runners.acp.process_channel import ProcessChannel
from gemwire.runners.acp.quirks import AgentQuirks, quirks_for
from gemwire.runners.acp.router import SessionRouter
from gemwire.runners.acp.serving import AgentRequestServer
from gemwire.runners.acp.session import (
    AcpSession,
    SessionContext,
)
from gemwire.runners.acp.terminals import TerminalPolicy, Terminals
from gemwire.runners.agents import agent_identity
from gemwire.wire import acp

__all__ = ("AcpClient", "initialize_request")


def initialize_request(
    options: AcpOptions, *, terminal: bool, elicitation: bool
) -> acp.InitializeRequest:
    """The ``initialize`` an `AcpClient` of ``options`` sends: ``terminal`` when it has a
    terminal policy, ``elicitation`` when it has an elicitation handler (``gemwire serve``
    sends the same one ahead to a spare agent, `gemwire.server.spares`)."""
    return acp.InitializeRequest(
        protocol_version=acp.PROTOCOL_VERSION,
        client_capabilities=options.client_capabilities(terminal=terminal, elicitation=elicitation),
        client_info=acp.Implementation(name="gemwire", title="gemwire", version=__version__),
    )


class AcpClient(ClientRequests):
    """A connection to one ACP agent; use it with ``async with``.

    Args:
        options: how to run the agent.
        channel: what carries the agent's messages (`AgentChannel`); the client opens
            and closes it. By default the process of ``options.command``
            (``options.launch``); given a channel, ``command`` may be empty.
        permission_handler: answers permission requests (an interactive host asks its
            user here); by default the ``options.permissions`` preset.
        terminal_policy: allows commands for ``terminal/*``; without one the client does
            not offer terminals.
        elicitation_handler: answers the agent's ``elicitation/create`` (forms, URLs); with
            one the client declares the ``elicitation`` capability. Without one it declares
            none, and declines an agent that asks anyway.
        credentials: sent as the ``_meta`` of ``authenticate`` (e.g. Gemini CLI's
            ``{"api-key": ...}``); kept in memory only. Their values, and those of the
            agent's environment under a name that marks a secret (``*_API_KEY``,
            ``*_TOKEN``, ...), are masked in everything the client emits: events,
            results, the stderr tail, error messages (docs/security.md).

    Raises `AgentNotFound` when the command cannot be run, `AgentCrashed` when the agent
    exits before answering ``initialize``, `AgentRequestFailed` when it refuses it,
    `RunTimedOut` when it does not answer within ``options.request_timeout``.
    """

    def __init__(
        self,
        options: AcpOptions,
        *,
        channel: AgentChannel | None = None,
        permission_handler: PermissionHandler | None = None,
        terminal_policy: TerminalPolicy | None = None,
        credentials: Mapping[str, Any] | None = None,
        elicitation_handler: ElicitationHandler | None = None,
    ) -> None:
        if channel is None and not options.command:
            raise ValueError("AcpOptions.command is empty: name the agent to run")
        self.options = options
        # Anything but "allow everything" holds only if the agent asks (asking.py).
        self._asks = permission_handler is not None or options.permissions != "all"
        self._permission_handler = permission_handler or permission_preset(
            options.permissions, always=options.allow_always
        )
        self._terminal_policy = terminal_policy
        self._elicitation_handler = elicitation_handler
        self._credentials = dict(credentials or {})
        self._masker = Masker(known_secrets(options.environment(), self._credentials.values()))
        self._agent = agent_identity(options.command)
        self._channel: AgentChannel = (
            channel
            if channel is not None
            else ProcessChannel(options.launch, secrets=self._masker.secrets)
        )
        self._exit_stack = AsyncExitStack()
        self._quirks: AgentQuirks = quirks_for(self._agent)
        self.initialize_response: acp.InitializeResponse | None = None

    # Lifecycle ----------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        try:
            await self._exit_stack.enter_async_context(self._running())
        except BaseExceptionGroup as group:
            await self._exit_stack.aclose()
            raise sole_exception(group) or group from None
        except BaseException:
            await self._exit_stack.aclose()
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object
    ) -> bool:
        try:
            return bool(await self._exit_stack.__aexit__(exc_type, exc, tb))  # type: ignore[arg-type]
        except BaseExceptionGroup as group:
            # anyio groups what the task group saw; one error comes out as itself.
            single = sole_exception(group)
            if single is None:
                raise
            if single is exc:
                return False
            raise single from None

    @asynccontextmanager
    async def _running(self) -> AsyncGenerator[None]:
        options = self.options
        self._reader_done = anyio.Event()
        async with self._channel as channel, anyio.create_task_group() as tg:
            self._tg = tg
            connection = AcpClientConnection(max_line_bytes=options.max_line_bytes)
            self._peer = AgentPeer(channel, connection, masker=self._masker)
            self._router = router = SessionRouter(self._peer)
            self._context = SessionContext(
                peer=self._peer,
                options=options,
                agent=lambda: self._agent,
                capabilities=lambda: self.agent_capabilities,
                permission_handler=self._permission_handler,
                task_group=tg,
                wake=router.wake,
                forget=router.forget,
            )
            self._terminals = (
                Terminals(
                    self._terminal_policy,
                    files=lambda sid: router.session(sid).files,
                    cwd=lambda sid: router.session(sid).cwd,
                    task_group=tg,
                    environment=options.environment(),
                )
                if self._terminal_policy is not None
                else None
            )
            self._server = AgentRequestServer(
                peer=self._peer,
                options=options,
                terminals=self._terminals,
                session=router.session,
                notice=lambda message: self._context.notice(message),
                broadcast=lambda notice: router.broadcast([notice]),
                elicitation_handler=self._elicitation_handler or decline_elicitation,
            )
            router.bind(self._context, tg, self._server.serve)
            tg.start_soon(self._read)
            try:
                await self._initialize()
                yield
            finally:
                with anyio.CancelScope(shield=True):
                    await self._shut_down()
                tg.cancel_scope.cancel()

    async def _read(self) -> None:
        try:
            await self._peer.read(self._router.may_read, self._router.dispatch)
        finally:
            self._reader_done.set()
            self._router.wake()

    async def _shut_down(self) -> None:
        for session in list(self._router.sessions.values()):
            if session.turn is not None:
                await session.turn.stop("the client closed")
        if self._terminals is not None:
            await self._terminals.aclose()
        await self._channel.close(CLOSE_GRACE)
        with anyio.move_on_after(CLOSE_GRACE):  # let the reader take what is left
            await self._reader_done.wait()
        self._peer.exited.set()  # the reader may have gone with a cancelled scope

    async def _initialize(self) -> None:
        request = initialize_request(
            self.options,
            terminal=self._terminals is not None,
            elicitation=self._elicitation_handler is not None,
        )
        response = await self._call(protocol.initialize(request))
        self.initialize_response = response
        if response.agent_info is not None:
            self._agent = agent_identity(self.options.command, response.agent_info.name)
        self._quirks = quirks_for(self._agent)
        protocol.check_protocol_version(response)
        if self.options.auth_method:
            await self.authenticate(self.options.auth_method)

    # Public API ---------------------------------------------------------------------

    @property
    def agent(self) -> str:
        """The ``agent`` field of this client's events: ``acp:<agent name>``."""
        return self._agent

    @property
    def auth_methods(self) -> list[acp.AuthMethod]:
        return self.initialize_response.auth_methods if self.initialize_response else []

    @property
    def stderr_tail(self) -> str:
        """The agent's last lines on stderr (secrets masked); "" where the channel has
        no stderr (an agent in this process, a remote one)."""
        return self._peer.stderr_tail

    @property
    def sessions(self) -> Mapping[str, AcpSession]:
        """The sessions opened or loaded on this agent process, by id."""
        return dict(self._router.sessions)

    @property
    def running(self) -> bool:
        """The agent process is still there (once it exits, every session is lost)."""
        return not self._peer.gone

    @property
    def exit_code(self) -> int | None:
        """The agent's exit status once it exited."""
        return self._peer.exit_code

    async def wait_exited(self) -> int | None:
        """Wait until the agent process exits (by itself, or crashed); its exit status.
        Sessions whose turns it took with it end with error kind ``crashed``."""
        await self._peer.exited.wait()
        return self._peer.exit_code

    def take_events(self) -> list[Event]:
        """Events no turn has taken yet, now: the client's own (protocol notices) and
        those of every session without an open turn (e.g. a replay after
        ``load_session``). A turn's events stay its own until its caller leaves it."""
        return self._masker.events(self._router.take_events())
