"""One session of an ACP agent: its own events, its turns one at a time, its settings.

Each session has its own event queue: the client's reader routes every update to the
session it names, so turns running at once on different sessions each see exactly
their own events. Events that come while no turn runs (``session_started``, a loaded
session's replay, mode changes) wait in the queue for the next turn, or for
`take_events`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import msgspec
from anyio.abc import TaskGroup

from gemwire._normalize.acp import AcpNormalizer
from gemwire._normalize.notices import notice
from gemwire.errors import AgentRequestFailed, InvalidOptions
from gemwire.events import Event, Notice, PermissionRequested, SessionUpdated
from gemwire.protocol import acp as protocol
from gemwire.runners.acp.events import EventQueue
from gemwire.runners.acp.files import ConfinedFileSystem
from gemwire.runners.acp.options import AcpOptions, McpServer, Prompt
from gemwire.runners.acp.peer import AgentPeer
from gemwire.runners.acp.permissions import PermissionHandler, PermissionRequest, choose_option
from gemwire.runners.acp.turn import AcpTurn
from gemwire.wire import acp
from gemwire.wire.jsonrpc import METHOD_NOT_FOUND

__all__ = (
    "AcpSession",
    "OpenedSession",
    "SessionContext",
    "session_folders",
    "session_params",
)

OpenedSession = (
    acp.NewSessionResponse
    | acp.LoadSessionResponse
    | acp.ResumeSessionResponse
    | acp.ForkSessionResponse
)
"""The answers that open a session: its modes, models and config options."""


def session_params(
    options: AcpOptions,
    capabilities: acp.AgentCapabilities,
    cwd: str | None,
    include_directories: Sequence[str] | None,
    mcp_servers: Sequence[McpServer] | None,
) -> tuple[str, tuple[str, ...], dict[str, Any]]:
    """A session's folder, its include directories and the params of the request that
    opens it, as the client sends them (``additionalDirectories`` only to an agent that
    supports them; ``gemwire serve`` opens a spare agent's session with the same ones).
    """
    folder, extra = session_folders(options, cwd, include_directories)
    servers = options.mcp_servers if mcp_servers is None else mcp_servers
    params: dict[str, Any] = {"cwd": folder, "mcp_servers": list(servers)}
    if extra and capabilities.session_capabilities.additional_directories is not None:
        params["additional_directories"] = list(extra)
    return folder, extra, params


def session_folders(
    options: AcpOptions, cwd: str | None, include_directories: Sequence[str] | None
) -> tuple[str, tuple[str, ...]]:
    """A session's folder and include directories, as the real paths the client serves."""
    folder = os.path.realpath(cwd or options.cwd or os.getcwd())
    chosen = options.include_directories if include_directories is None else include_directories
    return folder, tuple(os.path.realpath(d) for d in chosen)


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionContext:
    """What the sessions of one client share: the peer, the options, the handler, the
    task group their background work runs in."""

    peer: AgentPeer
    options: AcpOptions
    agent: Callable[[], str]
    capabilities: Callable[[], acp.AgentCapabilities]
    permission_handler: PermissionHandler
    task_group: TaskGroup
    wake: Callable[[], None]
    forget: Callable[[str], None]
    """Drops a closed session from the client's sessions."""

    def notice(
        self,
        message: str,
        session_id: str | None = None,
        severity: Literal["info", "warning", "error"] = "warning",
    ) -> Notice:
        return notice(self.agent(), session_id, message, severity=severity)


class AcpSession:
    """One session of an `AcpClient` (from `AcpClient.new_session` / `load_session`)."""

    def __init__(
        self,
        context: SessionContext,
        session_id: str,
        cwd: str,
        include_directories: tuple[str, ...],
        response: OpenedSession | None,
    ) -> None:
        self.context = context
        self.session_id = session_id
        self.cwd = cwd
        self.include_directories = include_directories
        self.files = ConfinedFileSystem((cwd, *include_directories))
        self.normalizer = AcpNormalizer(agent=context.agent(), session_id=session_id)
        self.state = protocol.AcpSessionState(session_id)
        self.queue = EventQueue(context.wake)
        self.modes: acp.SessionModeState | None = None
        self.models: acp.SessionModelState | None = None
        self.config_options: list[dict[str, Any]] | None = None
        self.turn: AcpTurn | None = None
        """The turn running now, if any."""
        self.reader: AcpTurn | None = None
        """The turn a caller reads, from ``async with`` to its end: what the queue holds
        until its ``turn_completed`` is its own, even after the agent ended it."""
        self.updates = 0
        """``session/update`` notifications received (an agent's ``settle_replay`` quirk
        watches it)."""
        self._permission_scopes: set[anyio.CancelScope] = set()
        if response is not None:
            self.loaded(response)

    @property
    def additional_directories(self) -> tuple[str, ...]:
        """Deprecated alias of ``include_directories``."""
        return self.include_directories

    @property
    def current_mode_id(self) -> str | None:
        return self.modes.current_mode_id if self.modes else None

    @property
    def current_model(self) -> str | None:
        """The session's model as the agent last said: ``models.currentModelId``, else the
        current value of its config option of category ``model``; ``None`` if neither."""
        if self.models is not None:
            return self.models.current_model_id
        option = next((o for o in self.config_options or [] if o.get("category") == "model"), None)
        value = option.get("currentValue") if option is not None else None
        return value if isinstance(value, str) else None

    @property
    def lost(self) -> bool:
        """The agent process exited: this session is gone with it."""
        return self.context.peer.gone

    def loaded(self, response: OpenedSession) -> None:
        self.modes, self.models = response.modes, response.models
        self.config_options = response.config_options

    def prompt(self, prompt: Prompt) -> AcpTurn:
        """A turn: use it with ``async with``, iterate it for events, then read
        ``result`` (or ``await turn.wait()``). One turn at a time per session; turns of
        different sessions run at once."""
        blocks: list[acp.ContentBlock] = (
            [acp.TextContent(text=prompt)] if isinstance(prompt, str) else list(prompt)
        )
        protocol.check_prompt(self.context.capabilities(), blocks)
        return AcpTurn(self, blocks)

    def take_events(self) -> list[Event]:
        """Events queued while no turn consumed them (e.g. a loaded session's replay);
        none while a turn is open (they are its own)."""
        if self.reader is not None:
            return []
        return self.queue.take_all()

    def emit(self, events: list[Event]) -> list[Event]:
        """Queue ``events``, secrets masked (every event of the session passes here);
        returns them as queued."""
        events = self.context.peer.masker.events(events)
        if self.turn is not None:
            self.turn.record(events)
        self.queue.put(events)
        return events

    def feed(self, item: protocol.SessionUpdate | protocol.UnknownUpdate) -> None:
        self.updates += 1
        for event in self.emit(self.normalizer.feed(item)):
            if isinstance(event, SessionUpdated) and not event.replay:
                self._follow(event)

    def _follow(self, event: SessionUpdated) -> None:
        """Keep the mode and config options what the agent says they are now (its
        ``current_mode_update``, or a mode marker in its text; ``config_option_update``)."""
        mode = event.data.get("currentModeId")
        if event.update == "current_mode_update" and self.modes is not None and mode:
            self.modes = msgspec.structs.replace(self.modes, current_mode_id=str(mode))
        options = event.data.get("configOptions")
        if event.update == "config_option_update" and isinstance(options, list):
            self.config_options = options

    async def cancel(self) -> None:
        """Cancel the running turn: pending permission requests are answered
        ``cancelled``, and the turn ends with stop reason ``cancelled`` (by the agent,
        or by the client after `CANCEL_GRACE` seconds). Without a running turn, nothing."""
        if not self.state.cancel():
            return
        self.normalizer.cancel_requested()
        await self.context.peer.notify(
            "session/cancel", acp.CancelNotification(session_id=self.session_id)
        )
        for scope in self._permission_scopes:
            scope.cancel()
        if self.turn is not None:
            self.turn.watch_cancel()

    async def close(self) -> None:
        """``session/close``: a running turn is stopped first (error kind ``cancelled``),
        then the agent frees the session, and once it answers the client forgets it. Raises
        `AgentRequestFailed` (``unsupported``) where the agent does not advertise it."""
        protocol.require_capability(self.context.capabilities(), "session/close")
        if self.turn is not None:
            await self.turn.stop("the session was closed")
        await self._call(
            protocol.close_session(acp.CloseSessionRequest(session_id=self.session_id))
        )
        self.context.forget(self.session_id)

    async def set_mode(self, mode_id: str) -> None:
        """``session/set_mode``; raises `AgentRequestFailed` if the agent refuses."""
        await self._call(
            protocol.set_mode(
                acp.SetSessionModeRequest(session_id=self.session_id, mode_id=mode_id)
            )
        )
        if self.modes is not None:
            self.modes = msgspec.structs.replace(self.modes, current_mode_id=mode_id)
        for option in self.config_options or []:
            if option.get("category") == "mode":  # the same mode, as a config option
                option["currentValue"] = mode_id

    async def set_model(self, model_id: str) -> None:
        """Choose the model: by ``session/set_model`` where the agent lists ``models``
        (Gemini CLI), else by a config option of category ``model``."""
        if self.models is not None:
            await self._call(
                protocol.set_model(
                    acp.SetSessionModelRequest(session_id=self.session_id, model_id=model_id)
                )
            )
            self.models = msgspec.structs.replace(self.models, current_model_id=model_id)
            return
        option = next((o for o in self.config_options or [] if o.get("category") == "model"), None)
        if option is None:
            raise AgentRequestFailed(
                "the agent offers no way to choose a model",
                method="session/set_model",
                code=METHOD_NOT_FOUND,
            )
        await self.set_config_option(str(option["id"]), model_id)

    async def set_config_option(self, config_id: str, value: str | bool) -> None:
        """``session/set_config_option``: ``value`` is one of the option's value ids, or a
        boolean for a ``type: "boolean"`` option (sent as that type, as the schema has it).
        The agent answers with all options. Another value raises `InvalidOptions`."""
        if not isinstance(value, str | bool):
            raise InvalidOptions(
                f"config option {config_id!r}: a value is a value id (a string) or a "
                f"boolean, not {value!r}"
            )
        request = acp.SetSessionConfigOptionRequest(
            session_id=self.session_id,
            config_id=config_id,
            value=value,
            type="boolean" if isinstance(value, bool) else None,
        )
        result = await self._call(protocol.set_config_option(request))
        if isinstance(result.get("configOptions"), list):
            self.config_options = result["configOptions"]
        option = next((o for o in self.config_options or [] if o.get("id") == config_id), {})
        current = option.get("currentValue")
        # The same mode as `modes` (claude-agent-acp, codex-acp 2 offer both).
        if option.get("category") == "mode" and isinstance(current, str) and self.modes:
            self.modes = msgspec.structs.replace(self.modes, current_mode_id=current)

    async def _call(self, call: protocol.Call[protocol.Json]) -> dict[str, Any]:
        result = await self.context.peer.call(call, self.context.options.request_timeout)
        return result if isinstance(result, dict) else {}

    async def answer_permission(
        self, request_id: str, params: acp.RequestPermissionRequest
    ) -> acp.RequestPermissionResponse:
        """Ask the permission handler; only an option the agent offered is ever sent."""
        context = self.context
        asked = self.emit(self.normalizer.permission_requested(request_id, params))[-1]
        assert isinstance(asked, PermissionRequested)
        offered = {o.option_id: o for o in params.options}
        kind, title = self.normalizer.describe(params.tool_call.tool_call_id)
        request = PermissionRequest(
            request_id=request_id,
            session_id=self.session_id,
            call_id=params.tool_call.tool_call_id,
            title=context.peer.mask(title),  # shown to a user, as the events are
            kind=kind,
            options=asked.options,
            tool_call=params.tool_call,
            diff=asked.diff,
            content=asked.content,
        )
        chosen: str | None = None
        cancelled = self.state.cancelling
        if not cancelled:
            with anyio.CancelScope() as scope:
                self._permission_scopes.add(scope)
                try:
                    chosen = await context.permission_handler(request)
                except Exception as exc:  # noqa: BLE001 - the host's code: deny, and say why
                    message = f"the permission handler failed: {exc!r}"
                    self.emit([context.notice(message, self.session_id)])
                    chosen = choose_option(request.options, allow=False)
                finally:
                    self._permission_scopes.discard(scope)
            cancelled = scope.cancelled_caught or self.state.cancelling
        if not cancelled and chosen is not None and chosen not in offered:
            message = f"the permission handler chose {chosen!r}, which was not offered; denied"
            self.emit([context.notice(message, self.session_id)])
            chosen = choose_option(request.options, allow=False)
        option = None if cancelled or chosen is None else offered[chosen]
        self.emit(self.normalizer.permission_resolved(request_id, request.call_id, option))
        outcome: acp.RequestPermissionOutcome = (
            acp.CancelledPermissionOutcome()
            if option is None
            else acp.SelectedPermissionOutcome(option_id=option.option_id)
        )
        return acp.RequestPermissionResponse(outcome=outcome)
