"""One server session (`LiveSession`): its record, log, stream and state, its agent while
it runs, and its permission requests.

Every event is masked, put in an envelope with the next seq, appended to the log and
only then offered to subscribers (`EventStream`). A log that cannot be written (a full
disk, a removed folder: any ``OSError``) ends this session alone: nothing more is
logged, its subscribers get a last ``stopped`` state saying why (never logged), its agent
stops, and it is not continued until the server restarts (`failure`).

Permission requests: with the preset ``ask`` a request goes to the session's subscribers
(answered over HTTP or WebSocket) and is denied after ``permission_timeout``, at once when
no client is subscribed, or ``permission_grace`` seconds after the last one left unless one
came back. Any other preset answers by itself.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from typing import Any

import anyio
import msgspec
from anyio.abc import TaskGroup

from gemwire._normalize.masking import Masker
from gemwire._normalize.notices import notice
from gemwire.events import (
    Event,
    PermissionRequested,
    PermissionResolved,
    SessionUpdated,
    TokenUsage,
    TurnCompleted,
    UserMessage,
)
from gemwire.protocol.gemini_content import INJECTED_PREFIXES
from gemwire.runners.acp import (
    AcpClient,
    AcpSession,
    PermissionRequest,
    choose_option,
    permission_preset,
)
from gemwire.serve_api import SessionView
from gemwire.server.config import ServerConfig
from gemwire.server.envelopes import SessionState, Status, event_envelope, state_envelope
from gemwire.server.responses import BadRequest, Conflict, NotFound
from gemwire.server.session_state import ServedState
from gemwire.server.store import EventLog, SessionRecord
from gemwire.server.stream import GEMINI_STREAM, StreamRun
from gemwire.server.streams import EventStream, Subscription

__all__ = ("LiveSession", "SessionView")

logger = logging.getLogger("gemwire.server")

_TITLE_CHARS = 80
_ANSWERED_KEPT = 256
ANSWER_CHARS = 1 << 20
"""A turn_completed's ``answer`` is cut to this many characters (the whole text is in the
turn's ``message_delta`` events): one envelope and log line stays below the clients'
caps however long the agent talks."""


def _bounded(turn: TurnCompleted) -> TurnCompleted:
    """``turn`` with its answer cut to `ANSWER_CHARS`, and a marker saying so."""
    over = len(turn.answer) - ANSWER_CHARS
    if over <= 0:
        return turn
    marker = (
        f"\n[gemwire: answer cut here, {over} more characters: the whole text is in "
        "this turn's message_delta events]"
    )
    return msgspec.structs.replace(turn, answer=turn.answer[:ANSWER_CHARS] + marker)


class _Pending:
    """A permission request waiting for a client's answer."""

    def __init__(self, request: PermissionRequest) -> None:
        self.request = request
        self.answered = anyio.Event()
        self.option_id: str | None = None
        self.by_client = False


class LiveSession:
    """One server session: its record, log and stream, and its agent while it runs."""

    def __init__(self, config: ServerConfig, record: SessionRecord, log: EventLog) -> None:
        self.config = config
        self.record = record
        self.log = log
        self.stream = EventStream(log)
        self.state = ServedState(record.id, self._publish_state, closed=record.closed)
        self.client: AcpClient | None = None
        self.acp: AcpSession | None = None
        self.agent_done = anyio.Event()
        self.agent_done.set()
        self.turn_done = anyio.Event()
        self.turn_done.set()
        self.pending: dict[str, _Pending] = {}
        self._answered: deque[str] = deque(maxlen=_ANSWERED_KEPT)
        """The requests answered lately (a second answer to one is a 409, not a 404)."""
        self.requested: dict[str, PermissionRequested] = {}
        self._denied: set[str] = set()
        """Requests the server denied alone, until their ``permission_resolved`` passes."""
        self.commands: list[dict[str, Any]] | None = None
        self.usage: TokenUsage | None = None
        self.tg: TaskGroup | None = None
        self.stream_run: StreamRun | None = None
        """A ``gemini-stream`` session's run, while its turn runs."""
        self._wake = anyio.Event()
        self._masker = Masker([config.token])
        self.between_turns: anyio.CancelScope | None = None
        """The scope of the task that publishes events between turns."""
        self.on_unsubscribe: Callable[[], None] = lambda: None
        """Called when a subscriber leaves (the manager waits for them at shutdown)."""
        self.on_failure: Callable[[str], None] = lambda why: None
        """Called once when the log cannot be written (the manager stops the session)."""
        self.failure: str | None = None
        """Why this session is out of service until the server restarts: its log could not
        be written, or was found damaged when loaded."""
        self._left = 0
        """How often the last subscriber left (the grace of the latest leaving counts)."""
        self.log_replay = False
        """Log the agent's replay: a saved agent session continued in a new server
        session, whose log does not hold that history yet."""

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def status(self) -> Status:
        return self.state.status

    @property
    def busy(self) -> bool:
        """A turn runs, or a prompt is starting one."""
        return self.state.busy

    @property
    def streamed(self) -> bool:
        """A ``gemini-stream`` session: a ``gemini -p`` run a turn, no agent between."""
        return self.record.agent == GEMINI_STREAM

    @property
    def live(self) -> bool:
        """The agent runs (or is starting)."""
        return not self.agent_done.is_set()

    @property
    def last_seq(self) -> int:
        return self.log.last_seq

    @property
    def agent_name(self) -> str:
        """The ``agent`` of events the server itself makes for this session."""
        return self.client.agent if self.client is not None else f"server:{self.record.agent}"

    def wake(self) -> None:
        """Have `serve` look again (a stop asked for, a turn begun or ended, an exit)."""
        self._wake.set()

    async def serve(self, idle_timeout: float) -> str:
        """Wait until the session is stopped, idle too long, or its agent exits; why."""
        assert self.client is not None
        while True:
            self._wake = anyio.Event()
            if self.state.stop_reason is not None:
                return self.state.stop_reason
            if not self.client.running:
                return "the agent exited"
            with anyio.move_on_after(float("inf") if self.busy else idle_timeout) as waited:
                await self._wake.wait()
            if waited.cancelled_caught:
                return "idle timeout"

    # Publishing ----------------------------------------------------------------------

    def publish_event(self, event: Event) -> None:
        if event.replay is True and not self.log_replay:
            return  # a loaded session's history: already in the log
        event = self._masker.event(event)
        if isinstance(event, PermissionRequested):
            self.requested[event.request_id] = event
        elif isinstance(event, PermissionResolved):
            self.requested.pop(event.request_id, None)
            if event.request_id in self._denied:
                self._denied.discard(event.request_id)
                event = msgspec.structs.replace(event, outcome="denied_no_client")
        elif isinstance(event, TurnCompleted):
            self.usage = event.usage or self.usage
            event = _bounded(event)
        elif isinstance(event, UserMessage) and self.record.title is None:
            # The user's first prompt, not what an agent injected before it (a continued
            # Gemini session replays its <session_context> preamble first).
            if not event.text.lstrip().startswith(INJECTED_PREFIXES):
                self.record.title = event.text[:_TITLE_CHARS]
        elif isinstance(event, SessionUpdated):
            self._session_updated(event)
        seq = self.log.last_seq + 1
        self._append(seq, event_envelope(seq, event))

    def _publish_state(self, status: Status, detail: str | None) -> None:
        """`ServedState`'s ``publish``: the only way a status is published."""
        seq = self.log.last_seq + 1
        self._append(seq, state_envelope(seq, SessionState(status=status, detail=detail)))

    def notice(self, message: str) -> None:
        session_id = self.acp.session_id if self.acp is not None else None
        self.publish_event(notice(self.agent_name, session_id, message))

    def _append(self, seq: int, envelope: bytes) -> None:
        if self.failure is not None:
            return  # out of service: nothing more is logged, nor sent
        try:
            self.log.append(seq, envelope)
        except OSError as exc:
            self._log_failed(seq, exc)
            return
        self.stream.publish(seq, envelope)

    def _log_failed(self, seq: int, exc: OSError) -> None:
        why = f"its log could not be written ({exc}): the session was stopped"
        logger.error("session %s: %s", self.id, why)
        self.failure = why
        # Its clients' last envelope: what they wait for (a turn's end, a state) will not
        # come, and this says why. It is never logged (nothing more can be).
        self.stream.end(seq, state_envelope(seq, SessionState(status="stopped", detail=why)))
        self.on_failure(why)

    def _session_updated(self, event: SessionUpdated) -> None:
        data = event.data
        if event.update == "available_commands_update":
            commands = data.get("availableCommands")
            self.commands = commands if isinstance(commands, list) else None
        elif event.update == "session_info_update" and isinstance(data.get("title"), str):
            self.record.title = data["title"]

    def check_in_service(self) -> None:
        """`Conflict` for a session out of service (`failure`)."""
        if self.failure is not None:
            raise Conflict(
                f"session {self.id} is out of service until the server restarts: {self.failure}"
            )

    # Subscribers and permissions --------------------------------------------------

    def subscribe(self, after: int) -> Subscription:
        return self.stream.subscribe(after)

    def unsubscribe(self, subscription: Subscription) -> None:
        self.stream.unsubscribe(subscription)
        self.on_unsubscribe()
        if not self.stream.subscribers and self.pending and self.tg is not None:
            self._left += 1
            self.tg.start_soon(self._deny_unwatched, self._left)

    async def _deny_unwatched(self, left: int) -> None:
        """Deny what waits once nobody has followed the session for the grace (a reload
        comes back in time, and answers)."""
        await anyio.sleep(self.config.permission_grace)
        if left == self._left and not self.stream.subscribers:
            for pending in self.pending.values():
                pending.answered.set()

    async def answer_permission(self, request: PermissionRequest) -> str | None:
        """The `PermissionHandler` of this session's client."""
        preset = self.record.permissions
        if preset != "ask":
            return await permission_preset(preset)(request)  # type: ignore[arg-type]
        deny = choose_option(request.options, allow=False)
        if not self.stream.subscribers:
            self._denied_alone(request, "no client follows the session")
            return deny
        pending = self.pending[request.request_id] = _Pending(request)
        try:
            with anyio.move_on_after(self.config.permission_timeout) as waited:
                await pending.answered.wait()
        finally:
            del self.pending[request.request_id]
            self._answered.append(request.request_id)
        if waited.cancelled_caught:
            timeout = self.config.permission_timeout
            self._denied_alone(request, f"no client answered within {timeout:g} s")
            return deny
        if not pending.by_client:
            grace = self.config.permission_grace
            self._denied_alone(request, f"the last client left {grace:g} s ago")
            return deny
        return pending.option_id

    def _denied_alone(self, request: PermissionRequest, why: str) -> None:
        """A notice that the server denied ``request`` itself (no client chose that); its
        ``permission_resolved``, which follows, says so too (``denied_no_client``)."""
        self._denied.add(request.request_id)
        self.notice(f"permission request {request.request_id} denied: no client ({why})")

    def resolve(self, request_id: str, option_id: str | None) -> None:
        """A client's answer; `NotFound`, `Conflict`, `BadRequest` as the API says."""
        pending = self.pending.get(request_id)
        if pending is None and request_id in self._answered:
            raise Conflict(f"permission request {request_id!r} is already answered")
        if pending is None:
            raise NotFound(f"no permission request {request_id!r} waits in session {self.id}")
        if pending.answered.is_set():
            raise Conflict(f"permission request {request_id!r} is already answered")
        offered = [o.option_id for o in pending.request.options]
        if option_id is not None and option_id not in offered:
            raise BadRequest(f"{option_id!r} was not offered; one of {offered} or null")
        pending.option_id = option_id
        pending.by_client = True
        pending.answered.set()

    # The view --------------------------------------------------------------------------

    def view(self) -> SessionView:
        acp_session = self.acp if self.live else None
        modes = models = config_options = None
        current_mode = None
        current_model = self.record.model if self.streamed else None
        if acp_session is not None:
            if acp_session.modes is not None:
                modes = msgspec.to_builtins(acp_session.modes.available_modes)
                current_mode = acp_session.modes.current_mode_id
            if acp_session.models is not None:
                models = msgspec.to_builtins(acp_session.models.available_models)
                current_model = acp_session.models.current_model_id
            config_options = acp_session.config_options
        return SessionView(
            id=self.id,
            agent=self.record.agent,
            cwd=self.record.cwd,
            agent_session_id=self.record.agent_session_id,
            status=self.status,
            created=self.record.created,
            title=self.record.title,
            last_seq=self.last_seq,
            modes=modes,
            current_mode=current_mode,
            models=models,
            current_model=current_model,
            config_options=config_options,
            commands=self.commands,
            usage=self.usage,
            pending_permissions=list(self.requested.values()),
        )
