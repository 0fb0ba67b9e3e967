"""Drive any ACP agent (``gemini --acp``, ``claude-code-acp``, ...) as a client.

    async with AcpClient(AcpOptions(command=("gemini", "--acp"))) as client:
        session = await client.new_session()
        async with session.prompt("fix the failing test") as turn:
            async for event in turn:
                print(event.type)
        print(turn.result.answer)

The client owns the agent process (its own process group, stopped with its whole tree
on exit) and a task group: one task reads the agent's stdout through the sans-IO
`AcpClientConnection`, one drains its stderr, and each request the agent makes
(permission, file, terminal) is served by a task of its own, so a slow permission
prompt never stops the stream. Events of every session go into one queue, which a
turn's iterator reads: first whatever came before the turn (``session_started``, a
loaded session's replay, mode changes), then the turn's own events up to its
``turn_completed`` — exactly one per turn, whatever happens (agent error, crash,
cancel, timeout, the caller leaving early).

While a turn is being consumed, a consumer slower than the agent holds the agent back
(the reader stops reading once `MAX_QUEUED_EVENTS` wait) — except while a request of
the caller (``set_mode``, ``load``, ...) waits for its answer, which must be read.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, Literal, Self

import anyio
import msgspec

from gemwire._normalize.acp import AcpNormalizer, error_for
from gemwire._transport.process import Child
from gemwire._version import __version__
from gemwire.errors import (
    RUN_FAILURES,
    AccessDenied,
    AgentCrashed,
    AgentRequestFailed,
    GemwireError,
    RunFailed,
)
from gemwire.events import (
    Event,
    FileChanged,
    Notice,
    PermissionOption,
    TokenUsage,
    TurnCompleted,
    TurnError,
    Unknown,
)
from gemwire.protocol.acp import (
    AcpClientConnection,
    AcpItem,
    AgentError,
    AgentNotification,
    AgentRequest,
    AgentResult,
    OversizedLine,
    ProtocolViolation,
    SessionUpdate,
    UnknownUpdate,
    UnservedRequest,
)
from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES
from gemwire.runners._resume_guard import remove_resume_stubs
from gemwire.runners.acp.files import RESOURCE_NOT_FOUND, ConfinedFileSystem
from gemwire.runners.acp.permissions import (
    PermissionHandler,
    PermissionPreset,
    PermissionRequest,
    choose_option,
    permission_preset,
)
from gemwire.runners.acp.terminals import TerminalPolicy, Terminals
from gemwire.wire import acp
from gemwire.wire.jsonrpc import INTERNAL_ERROR, METHOD_NOT_FOUND, ErrorObject, RequestId

__all__ = (
    "CANCEL_GRACE",
    "MAX_QUEUED_EVENTS",
    "REPLAY_SETTLE",
    "AcpClient",
    "AcpOptions",
    "AcpSession",
    "AcpTurn",
    "AcpTurnResult",
    "Prompt",
    "run_acp",
)

CANCEL_GRACE = 10.0
"""Seconds an agent has to end a cancelled turn before the client ends it itself."""

REPLAY_SETTLE = 0.25
"""Seconds without a replayed update after which a loaded session's history is taken as
complete (at most `REPLAY_SETTLE_MAX`)."""

REPLAY_SETTLE_MAX = 5.0

CLOSE_GRACE = 2.0
"""Seconds an agent has to exit once its stdin is closed, before it is stopped."""

MAX_QUEUED_EVENTS = 1024
"""Events waiting for a slow consumer before the reader stops reading the agent."""

_STDERR_TAIL_LINES = 200
_AUTH_REQUIRED = -32000

Prompt = str | Sequence[acp.ContentBlock]
"""A prompt: text, or ACP content blocks (text, resource links, embedded resources,
images; whichever the agent's ``promptCapabilities`` allow)."""


class AcpOptions(msgspec.Struct, frozen=True, kw_only=True):
    """How to run an ACP agent. Only ``command`` is required.

    ``env`` is added to the current environment (unless ``inherit_env`` is false).
    ``permissions`` is the preset that
    answers permission requests unless the client is given a handler. ``serve_reads``
    offers ``fs/read_text_file`` (off by default: with it on, Gemini CLI cannot create
    new files, docs/acp.md explains why); ``serve_writes`` offers ``fs/write_text_file``.
    ``auth_method`` authenticates right after ``initialize`` (and again when the agent
    answers "auth required"). ``timeout`` bounds each turn (error kind ``timeout``).
    """

    command: tuple[str, ...]
    cwd: str | None = None
    additional_directories: tuple[str, ...] = ()
    mcp_servers: tuple[acp.McpServerStdio | acp.McpServerHttp | acp.McpServerSse, ...] = ()
    env: dict[str, str] = {}
    inherit_env: bool = True
    """``False``: ``env`` is the agent's whole environment, not added to this process's."""
    permissions: PermissionPreset = "deny"
    allow_always: bool = False
    """Let the preset pick ``allow_always`` options over ``allow_once``."""
    serve_reads: bool = False
    serve_writes: bool = True
    auth_method: str | None = None
    load_session: str | None = None
    """`run_acp` loads this session instead of starting a new one."""
    mode: str | None = None
    """`run_acp` sets this mode before the prompt."""
    model: str | None = None
    """`run_acp` sets this model before the prompt."""
    timeout: float | None = None
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES


class AcpTurnResult(msgspec.Struct, frozen=True, kw_only=True):
    """How a turn ended. The partial answer and usage survive every failure."""

    ok: bool
    answer: str
    error: TurnError | None
    stop_reason: str
    files_changed: list[FileChanged]
    usage: TokenUsage | None
    session_id: str
    duration_s: float
    notices: list[Notice]
    stderr_tail: str
    exit_code: int | None
    """The agent's exit status if it exited during the turn."""

    def raise_for_error(self) -> None:
        """Raise the `RunFailed` subclass for the error kind, unless the turn succeeded."""
        if self.ok or self.error is None:
            return
        failure = RUN_FAILURES.get(self.error.kind, RunFailed)
        raise failure(self.error.message, exit_code=self.error.exit_code, result=self)


class _Waiter:
    __slots__ = ("done", "error", "result")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.result: Any = None
        self.error: GemwireError | None = None

    def resolve(self, result: Any = None, error: GemwireError | None = None) -> None:
        if not self.done.is_set():
            self.result, self.error = result, error
            self.done.set()


class _EventQueue:
    """Events in order; one condition wakes whoever waits for a change."""

    def __init__(self) -> None:
        self._items: deque[Event] = deque()
        self._changed = anyio.Event()

    def __len__(self) -> int:
        return len(self._items)

    def notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def put(self, events: Sequence[Event]) -> None:
        if events:
            self._items.extend(events)
            self.notify()

    def take_all(self) -> list[Event]:
        items = list(self._items)
        self._items.clear()
        self.notify()
        return items

    async def get(self) -> Event:
        while not self._items:
            await self._changed.wait()
        event = self._items.popleft()
        self.notify()
        return event

    async def wait_until(self, ready: Callable[[], bool]) -> None:
        while not ready():
            await self._changed.wait()


class AcpClient:
    """A connection to one ACP agent process; use it with ``async with``.

    Args:
        options: how to run the agent.
        permission_handler: answers permission requests (an interactive host asks its
            user here); by default the ``options.permissions`` preset.
        terminal_policy: allows commands for ``terminal/*``; without one the client does
            not offer terminals.
        credentials: sent as the ``_meta`` of ``authenticate`` (e.g. Gemini CLI's
            ``{"api-key": ...}``); kept in memory only, and masked in the stderr tail.

    Raises `AgentNotFound` when the command cannot be run, `AgentCrashed` when the agent
    exits before answering ``initialize``, `AgentRequestFailed` when it refuses it.
    """

    def __init__(
        self,
        options: AcpOptions,
        *,
        permission_handler: PermissionHandler | None = None,
        terminal_policy: TerminalPolicy | None = None,
        credentials: Mapping[str, Any] | None = None,
    ) -> None:
        if not options.command:
            raise ValueError("AcpOptions.command is empty: name the agent to run")
        self.options = options
        self._permission_handler = permission_handler or permission_preset(
            options.permissions, always=options.allow_always
        )
        self._terminal_policy = terminal_policy
        self._credentials = dict(credentials or {})
        self._secrets = [v for v in self._credentials.values() if isinstance(v, str) and v]
        self._conn = AcpClientConnection(max_line_bytes=options.max_line_bytes)
        self._agent = f"acp:{Path(options.command[0]).name}"
        self._cwd = Path(os.path.realpath(options.cwd or os.getcwd()))
        self._exit_stack = AsyncExitStack()
        self._sessions: dict[str, AcpSession] = {}
        self._early: list[SessionUpdate | UnknownUpdate] = []
        self._waiters: dict[RequestId, _Waiter] = {}
        self._stderr_tail: deque[str] = deque(maxlen=_STDERR_TAIL_LINES)
        self._new_sessions = 0
        self._control = 0
        self._consumers = 0
        self._exit_code: int | None = None
        self._gone = False
        self.initialize_response: acp.InitializeResponse | None = None

    # Lifecycle ----------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        try:
            await self._exit_stack.enter_async_context(self._running())
        except BaseExceptionGroup as group:
            await self._exit_stack.aclose()
            raise _single(group) or group from None
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
            single = _single(group)
            if single is None:
                raise
            if single is exc:
                return False
            raise single from None

    @asynccontextmanager
    async def _running(self) -> AsyncGenerator[None]:
        options = self.options
        self._queue = _EventQueue()
        self._write_lock = anyio.Lock()
        self._reader_done = anyio.Event()
        env = {**(os.environ if options.inherit_env else {}), **options.env}
        async with (
            await Child.spawn(options.command, cwd=self._cwd, env=env) as child,
            anyio.create_task_group() as tg,
        ):
            self._child, self._tg = child, tg
            self._terminals = (
                Terminals(self._terminal_policy, self._files_of, self._cwd_of, tg)
                if self._terminal_policy is not None
                else None
            )
            tg.start_soon(self._read_stdout)
            tg.start_soon(self._read_stderr)
            try:
                await self._initialize()
                yield
            finally:
                with anyio.CancelScope(shield=True):
                    await self._shut_down()
                tg.cancel_scope.cancel()

    async def _shut_down(self) -> None:
        for session in list(self._sessions.values()):
            if session._turn is not None:
                await session._turn._stop("the client closed")
        if self._terminals is not None:
            await self._terminals.aclose()
        await self._child.close_input()
        with anyio.move_on_after(CLOSE_GRACE):
            await self._child.wait()
        await self._child.stop()
        self._child.kill_leftovers()
        with anyio.move_on_after(CLOSE_GRACE):  # let the reader take what is left
            await self._reader_done.wait()

    async def _initialize(self) -> None:
        fs = acp.FileSystemCapabilities(
            read_text_file=self.options.serve_reads, write_text_file=self.options.serve_writes
        )
        request = acp.InitializeRequest(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=acp.ClientCapabilities(fs=fs, terminal=self._terminals is not None),
            client_info=acp.Implementation(name="gemwire", title="gemwire", version=__version__),
        )
        response: acp.InitializeResponse = await self._call("initialize", request)
        self.initialize_response = response
        if response.agent_info is not None:
            self._agent = f"acp:{response.agent_info.name}"
        if response.protocol_version != acp.PROTOCOL_VERSION:
            self._emit(
                [
                    self._notice(
                        f"the agent speaks ACP protocol version {response.protocol_version}; "
                        f"gemwire speaks {acp.PROTOCOL_VERSION}"
                    )
                ]
            )
        if self.options.auth_method:
            await self.authenticate(self.options.auth_method)

    # Public API ---------------------------------------------------------------------

    @property
    def agent(self) -> str:
        """The ``agent`` field of this client's events: ``acp:<agent name>``."""
        return self._agent

    @property
    def agent_info(self) -> acp.Implementation | None:
        return self.initialize_response.agent_info if self.initialize_response else None

    @property
    def agent_capabilities(self) -> acp.AgentCapabilities:
        response = self.initialize_response
        return response.agent_capabilities if response else acp.AgentCapabilities()

    @property
    def auth_methods(self) -> list[acp.AuthMethod]:
        return self.initialize_response.auth_methods if self.initialize_response else []

    @property
    def stderr_tail(self) -> str:
        """The agent's last lines on stderr (credentials masked)."""
        return "\n".join(self._stderr_tail)

    async def authenticate(self, method_id: str) -> None:
        """Authenticate with one of `auth_methods`, with the client's credentials."""
        params: dict[str, Any] = {"methodId": method_id}
        if self._credentials:
            params["_meta"] = self._credentials
        await self._call("authenticate", params)

    async def new_session(
        self,
        *,
        cwd: str | None = None,
        additional_directories: Sequence[str] | None = None,
        mcp_servers: Sequence[acp.McpServerStdio | acp.McpServerHttp | acp.McpServerSse]
        | None = None,
    ) -> AcpSession:
        """Start a session in ``cwd`` (default: ``options.cwd``, else here); emits
        ``session_started``."""
        folder, extra, params = self._session_params(cwd, additional_directories, mcp_servers)
        self._new_sessions += 1
        try:
            response: acp.NewSessionResponse = await self._call_with_auth(
                "session/new", acp.NewSessionRequest(**params)
            )
        finally:
            self._new_sessions -= 1
        session = AcpSession(self, response.session_id, folder, extra, response)
        model = response.models.current_model_id if response.models else None
        self._register(session, model)
        early, self._early = self._early, []
        for item in early:
            self._on_update(item)
        return session

    async def load_session(
        self,
        session_id: str,
        *,
        cwd: str | None = None,
        additional_directories: Sequence[str] | None = None,
        mcp_servers: Sequence[acp.McpServerStdio | acp.McpServerHttp | acp.McpServerSse]
        | None = None,
    ) -> AcpSession:
        """Load a saved session (the agent must advertise ``loadSession``). Its history
        comes as events marked ``replay``, before and after this returns."""
        if not self.agent_capabilities.load_session:
            raise AgentRequestFailed(
                "the agent does not advertise loadSession",
                method="session/load",
                code=METHOD_NOT_FOUND,
            )
        folder, extra, params = self._session_params(cwd, additional_directories, mcp_servers)
        session = AcpSession(self, session_id, folder, extra, None)
        session.normalizer.begin_replay()
        self._register(session, None)
        try:
            response: acp.LoadSessionResponse = await self._call_with_auth(
                "session/load", acp.LoadSessionRequest(session_id=session_id, **params)
            )
        except BaseException:
            del self._sessions[session_id]
            raise
        session._loaded(response)
        # The replay may go on after the answer (Gemini CLI does not wait for it); let it
        # settle, so that a prompt sent next does not interleave with history.
        with anyio.move_on_after(REPLAY_SETTLE_MAX):
            while True:
                seen = session._updates
                await anyio.sleep(REPLAY_SETTLE)
                if session._updates == seen:
                    break
        await self._protect_loaded_session(session_id, folder)
        return session

    async def _protect_loaded_session(self, session_id: str, folder: str) -> None:
        """Gemini CLI writes a stub for a session it loads, which its next start's cleanup
        deletes together with the session (docs/running.md, "Resuming"): remove the stub."""
        info = self.agent_info
        if info is None or info.name != "gemini-cli":
            return
        inherited = os.environ if self.options.inherit_env else {}
        home = {**inherited, **self.options.env}.get("GEMINI_CLI_HOME")

        def remove() -> None:
            remove_resume_stubs(home or os.path.expanduser("~"), folder, session_id)

        try:
            await anyio.to_thread.run_sync(remove)
        except OSError as exc:
            message = (
                f"could not remove the stub file of loaded session {session_id} ({exc}); "
                "Gemini's session cleanup may delete the session at its next start"
            )
            self._emit([self._notice(message)])

    async def list_sessions(self, *, cwd: str | None = None) -> list[acp.SessionInfo]:
        """The agent's saved sessions (only if it advertises ``session/list``)."""
        if self.agent_capabilities.session_capabilities.list is None:
            raise AgentRequestFailed(
                "the agent does not advertise session/list",
                method="session/list",
                code=METHOD_NOT_FOUND,
            )
        sessions: list[acp.SessionInfo] = []
        cursor: str | None = None
        while True:
            page: acp.ListSessionsResponse = await self._call(
                "session/list", acp.ListSessionsRequest(cwd=cwd, cursor=cursor)
            )
            sessions += page.sessions
            if not page.next_cursor:
                return sessions
            cursor = page.next_cursor

    def take_events(self) -> list[Event]:
        """Events queued outside a turn (e.g. a replay after ``load_session``), now."""
        return self._queue.take_all()

    # Sessions -----------------------------------------------------------------------

    def _session_params(
        self,
        cwd: str | None,
        additional_directories: Sequence[str] | None,
        mcp_servers: Sequence[Any] | None,
    ) -> tuple[str, tuple[str, ...], dict[str, Any]]:
        folder = os.path.realpath(cwd or self.options.cwd or os.getcwd())
        extra = tuple(
            os.path.realpath(d)
            for d in (
                self.options.additional_directories
                if additional_directories is None
                else additional_directories
            )
        )
        params: dict[str, Any] = {
            "cwd": folder,
            "mcp_servers": list(self.options.mcp_servers if mcp_servers is None else mcp_servers),
        }
        if extra:
            if self.agent_capabilities.session_capabilities.additional_directories is not None:
                params["additional_directories"] = list(extra)
            else:
                self._emit(
                    [
                        self._notice(
                            "the agent does not support additional directories; the client "
                            "still serves files in them"
                        )
                    ]
                )
        return folder, extra, params

    def _register(self, session: AcpSession, model: str | None) -> None:
        self._sessions[session.session_id] = session
        info = self.agent_info
        self._emit(
            session.normalizer.started(
                cwd=session.cwd, model=model, agent_version=info.version if info else None
            )
        )

    def _session(self, session_id: str) -> AcpSession:
        session = self._sessions.get(session_id)
        if session is None:
            raise AccessDenied(f"no session {session_id!r}")
        return session

    def _files_of(self, session_id: str) -> ConfinedFileSystem:
        return self._session(session_id).files

    def _cwd_of(self, session_id: str) -> str:
        return self._session(session_id).cwd

    # Requests to the agent ----------------------------------------------------------

    async def _request(self, method: str, params: Any, *, control: bool = True) -> _Waiter:
        """Send a request; the waiter is resolved by the answer, or by the agent's end."""
        if self._gone:
            raise self._crashed(method)
        request_id, data = self._conn.send_request(method, params)
        waiter = self._waiters[request_id] = _Waiter()
        if control:
            # The answer must be read even if a consumer is slow: lift the backpressure.
            self._control += 1
            self._queue.notify()

            async def _done() -> None:
                await waiter.done.wait()
                self._control -= 1

            self._tg.start_soon(_done)
        await self._write(data)
        return waiter

    async def _call(self, method: str, params: Any) -> Any:
        waiter = await self._request(method, params)
        await waiter.done.wait()
        if waiter.error is not None:
            raise waiter.error
        return waiter.result

    async def _call_with_auth(self, method: str, params: Any) -> Any:
        try:
            return await self._call(method, params)
        except AgentRequestFailed as exc:
            if exc.code != _AUTH_REQUIRED or not self.options.auth_method:
                raise
        await self.authenticate(self.options.auth_method)
        return await self._call(method, params)

    async def _notify(self, method: str, params: Any) -> None:
        if not self._gone:
            await self._write(self._conn.send_notification(method, params))

    async def _write(self, data: bytes) -> None:
        # If the agent is gone, the reader sees the end of its output and fails what waits.
        async with self._write_lock:
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                await self._child.write(data)

    def _crashed(self, method: str) -> AgentCrashed:
        code = self._exit_code
        status = f"exited with code {code}" if code is not None else "closed its output"
        return AgentCrashed(f"the agent {status} before answering {method}", exit_code=code)

    # Reading the agent ---------------------------------------------------------------

    async def _read_stdout(self) -> None:
        try:
            while True:
                await self._queue.wait_until(self._may_read)
                data = await self._child.read("stdout")
                for item in self._conn.receive_data(data):
                    self._dispatch(item)
                if not data:
                    break
            with anyio.move_on_after(CLOSE_GRACE):
                self._exit_code = await self._child.wait()
            self._gone = True
            pending = self._conn.close_pending()
            waiters, self._waiters = self._waiters, {}
            for request_id, waiter in waiters.items():
                waiter.resolve(error=self._crashed(pending.get(request_id, "a request")))
        finally:
            self._reader_done.set()

    def _may_read(self) -> bool:
        return len(self._queue) < MAX_QUEUED_EVENTS or self._consumers == 0 or self._control > 0

    async def _read_stderr(self) -> None:
        pending = b""
        while data := await self._child.read("stderr"):
            *lines, pending = (pending + data).split(b"\n")
            for line in lines:
                self._stderr_line(line)
        if pending:
            self._stderr_line(pending)

    def _stderr_line(self, raw: bytes) -> None:
        line = raw.decode(errors="replace")
        for secret in self._secrets:
            line = line.replace(secret, "***")
        self._stderr_tail.append(line[:2000])

    def _dispatch(self, item: AcpItem) -> None:
        match item:
            case SessionUpdate() | UnknownUpdate():
                self._on_update(item)
            case AgentRequest():
                self._tg.start_soon(self._serve, item)
            case UnservedRequest():
                self._emit([self._notice(f"refused the agent's {item.method}: {item.message}")])
                data = self._conn.send_error(item.id, item.code, item.message)
                self._tg.start_soon(self._write, data)
            case AgentResult():
                waiter = self._waiters.pop(item.id, None)
                if waiter is not None:
                    waiter.resolve(result=item.result)
            case AgentError():
                waiter = self._waiters.pop(item.id, None)
                if waiter is not None:
                    error = AgentRequestFailed(
                        item.error.message,
                        method=item.method,
                        code=item.error.code,
                        data=item.error.data,
                    )
                    waiter.resolve(error=error)
            case AgentNotification():
                self._emit(
                    [
                        self._unknown(item.method, item.params or ""),
                    ]
                )
            case ProtocolViolation():
                self._emit([self._notice(f"protocol violation: {item.reason}: {item.line[:200]}")])
            case OversizedLine():
                self._emit(
                    [
                        self._notice(
                            f"skipped a {item.size}-byte message: over the {item.limit}-byte limit"
                        )
                    ]
                )

    def _on_update(self, item: SessionUpdate | UnknownUpdate) -> None:
        session = self._sessions.get(item.session_id or "")
        if session is not None:
            session._updates += 1
            self._emit(session.normalizer.feed(item), session)
        elif self._new_sessions and item.session_id:
            self._early.append(item)  # for a session whose session/new answer is on its way
        else:
            raw = (
                item.raw if isinstance(item, UnknownUpdate) else msgspec.json.encode(item).decode()
            )
            self._emit([self._unknown("session/update", raw, item.session_id)])

    # Serving the agent ---------------------------------------------------------------

    async def _serve(self, request: AgentRequest) -> None:
        try:
            result = await self._handle(request)
        except AccessDenied as exc:
            if exc.code != RESOURCE_NOT_FOUND:  # a missing file is an answer, not a denial
                session = self._sessions.get(getattr(request.params, "session_id", ""))
                notice = self._notice(f"denied the agent's {request.method}: {exc}")
                self._emit([notice], session)
            data = {"path": exc.path} if exc.path else None
            reply = self._conn.send_error(request.id, exc.code, str(exc), data)
        except Exception as exc:  # noqa: BLE001 - a bug in a handler must not leave the agent waiting
            self._emit([self._notice(f"failed to serve the agent's {request.method}: {exc!r}")])
            reply = self._conn.send_error(request.id, INTERNAL_ERROR, "Internal error")
        else:
            reply = self._conn.send_result(request.id, result)
        await self._write(reply)

    async def _handle(self, request: AgentRequest) -> Any:
        params = request.params
        method = request.method
        if method == "session/request_permission":
            return await self._session(params.session_id)._permission(str(request.id), params)
        if method == "fs/read_text_file":
            if not self.options.serve_reads:
                raise AccessDenied(
                    "this client does not offer fs/read_text_file", code=METHOD_NOT_FOUND
                )
            files = self._session(params.session_id).files
            text = await anyio.to_thread.run_sync(
                lambda: files.read_text(params.path, line=params.line, limit=params.limit)
            )
            return acp.ReadTextFileResponse(content=text)
        if method == "fs/write_text_file":
            if not self.options.serve_writes:
                raise AccessDenied(
                    "this client does not offer fs/write_text_file", code=METHOD_NOT_FOUND
                )
            files = self._session(params.session_id).files
            await anyio.to_thread.run_sync(files.write_text, params.path, params.content)
            return {}
        terminals = self._terminals
        if terminals is None:
            raise AccessDenied("this client does not offer terminals", code=METHOD_NOT_FOUND)
        self._session(params.session_id)
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

    # Events -------------------------------------------------------------------------

    def _emit(self, events: Sequence[Event], session: AcpSession | None = None) -> None:
        if session is not None and session._turn is not None:
            session._turn._record(events)
        self._queue.put(events)

    def _notice(
        self, message: str, severity: Literal["info", "warning", "error"] = "warning"
    ) -> Notice:
        return Notice(agent=self._agent, severity=severity, message=message, source="gemwire")

    def _unknown(self, upstream_type: str, raw: str, session_id: str | None = None) -> Event:
        return Unknown(
            agent=self._agent, session_id=session_id, upstream_type=upstream_type, raw=raw
        )


class AcpSession:
    """One session of an `AcpClient` (from `AcpClient.new_session` / `load_session`)."""

    def __init__(
        self,
        client: AcpClient,
        session_id: str,
        cwd: str,
        additional_directories: tuple[str, ...],
        response: acp.NewSessionResponse | None,
    ) -> None:
        self._client = client
        self.session_id = session_id
        self.cwd = cwd
        self.additional_directories = additional_directories
        self.files = ConfinedFileSystem((cwd, *additional_directories))
        self.normalizer = AcpNormalizer(agent=client.agent, session_id=session_id)
        self.modes: acp.SessionModeState | None = None
        self.models: acp.SessionModelState | None = None
        self.config_options: list[dict[str, Any]] | None = None
        self._turn: AcpTurn | None = None
        self._permission_scopes: set[anyio.CancelScope] = set()
        self._cancelling = False
        self._updates = 0
        if response is not None:
            self._loaded(response)

    def _loaded(self, response: acp.NewSessionResponse | acp.LoadSessionResponse) -> None:
        self.modes, self.models = response.modes, response.models
        self.config_options = response.config_options

    @property
    def current_mode_id(self) -> str | None:
        return self.modes.current_mode_id if self.modes else None

    def prompt(self, prompt: Prompt) -> AcpTurn:
        """A turn: use it with ``async with``, iterate it for events, then read
        ``result``. One turn at a time per session."""
        blocks: list[acp.ContentBlock] = (
            [acp.TextContent(text=prompt)] if isinstance(prompt, str) else list(prompt)
        )
        return AcpTurn(self, blocks)

    async def cancel(self) -> None:
        """Cancel the running turn: pending permission requests are answered
        ``cancelled``, and the turn ends with stop reason ``cancelled`` (by the agent,
        or by the client after `CANCEL_GRACE` seconds)."""
        turn = self._turn
        self._cancelling = True
        self.normalizer.cancel_requested()
        await self._client._notify(
            "session/cancel", acp.CancelNotification(session_id=self.session_id)
        )
        for scope in self._permission_scopes:
            scope.cancel()
        if turn is not None:
            turn._watch_cancel()

    async def set_mode(self, mode_id: str) -> None:
        """``session/set_mode``; raises `AgentRequestFailed` if the agent refuses."""
        await self._client._call(
            "session/set_mode",
            acp.SetSessionModeRequest(session_id=self.session_id, mode_id=mode_id),
        )
        if self.modes is not None:
            self.modes = msgspec.structs.replace(self.modes, current_mode_id=mode_id)

    async def set_model(self, model_id: str) -> None:
        """Choose the model: by ``session/set_model`` where the agent lists ``models``
        (Gemini CLI), else by a config option of category ``model``."""
        client = self._client
        if self.models is not None:
            await client._call(
                "session/set_model",
                acp.SetSessionModelRequest(session_id=self.session_id, model_id=model_id),
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

    async def set_config_option(self, config_id: str, value: Any) -> None:
        """``session/set_config_option``; the agent answers with all options."""
        result = await self._client._call(
            "session/set_config_option",
            acp.SetSessionConfigOptionRequest(
                session_id=self.session_id, config_id=config_id, value=value
            ),
        )
        if isinstance(result, dict) and isinstance(result.get("configOptions"), list):
            self.config_options = result["configOptions"]

    async def _permission(
        self, request_id: str, params: acp.RequestPermissionRequest
    ) -> acp.RequestPermissionResponse:
        client = self._client
        client._emit(self.normalizer.permission_requested(request_id, params), self)
        offered = {o.option_id: o for o in params.options}
        kind, title = self.normalizer.describe(params.tool_call.tool_call_id)
        request = PermissionRequest(
            request_id=request_id,
            session_id=self.session_id,
            call_id=params.tool_call.tool_call_id,
            title=title,
            kind=kind,
            options=[
                PermissionOption(option_id=o.option_id, name=o.name, kind=o.kind)
                for o in params.options
            ],
            tool_call=params.tool_call,
        )
        chosen: str | None = None
        cancelled = self._cancelling
        if not cancelled:
            with anyio.CancelScope() as scope:
                self._permission_scopes.add(scope)
                try:
                    chosen = await client._permission_handler(request)
                except Exception as exc:  # noqa: BLE001 - the host's code: deny, and say why
                    client._emit([client._notice(f"the permission handler failed: {exc!r}")], self)
                    chosen = choose_option(request.options, allow=False)
                finally:
                    self._permission_scopes.discard(scope)
            cancelled = scope.cancelled_caught or self._cancelling
        if not cancelled and chosen is not None and chosen not in offered:
            client._emit(
                [
                    client._notice(
                        f"the permission handler chose {chosen!r}, which was not offered; denied"
                    )
                ],
                self,
            )
            chosen = choose_option(request.options, allow=False)
        option = None if cancelled or chosen is None else offered[chosen]
        client._emit(self.normalizer.permission_resolved(request_id, request.call_id, option), self)
        outcome: acp.RequestPermissionOutcome = (
            acp.CancelledPermissionOutcome()
            if option is None
            else acp.SelectedPermissionOutcome(option_id=option.option_id)
        )
        return acp.RequestPermissionResponse(outcome=outcome)


class AcpTurn:
    """One prompt and everything the agent does for it, up to its ``turn_completed``."""

    def __init__(self, session: AcpSession, blocks: list[acp.ContentBlock]) -> None:
        self.session = session
        self.prompt = blocks
        self._client = session._client
        self._events: list[Event] = []
        self._completion: TurnCompleted | None = None
        self._finished = False  # its turn_completed was iterated
        self._done = anyio.Event()
        self._waiter: _Waiter | None = None
        self._stopped: TurnError | None = None
        self._watchdog = False
        self._result: AcpTurnResult | None = None
        self._started = 0.0

    @property
    def result(self) -> AcpTurnResult:
        """The outcome; available once the turn has ended."""
        if self._result is None:
            raise GemwireError("the turn has not ended yet: iterate its events first")
        return self._result

    async def __aenter__(self) -> Self:
        session = self.session
        if session._turn is not None:
            raise GemwireError(f"session {session.session_id} already has a turn running")
        session._turn = self
        session._cancelling = False
        self._client._consumers += 1
        self._started = time.monotonic()
        self._client._emit(session.normalizer.prompt_sent(self.prompt), session)
        try:
            self._waiter = await self._client._request(
                "session/prompt",
                acp.PromptRequest(session_id=session.session_id, prompt=self.prompt),
                control=False,
            )
        except AgentCrashed as exc:
            self._waiter = _Waiter()
            self._waiter.resolve(error=exc)
        self._client._tg.start_soon(self._run)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        with anyio.CancelScope(shield=True):
            if not self._done.is_set():
                await self._stop("the caller stopped the turn")
            self._client._consumers -= 1
            self._client._queue.notify()

    def __aiter__(self) -> AsyncIterator[Event]:
        return self

    async def __anext__(self) -> Event:
        if self._finished:
            raise StopAsyncIteration
        event = await self._client._queue.get()
        if event is self._completion:
            self._finished = True
        return event

    async def wait(self) -> AcpTurnResult:
        """Consume the turn's events and return its result."""
        async for _ in self:
            pass
        return self.result

    async def cancel(self) -> None:
        """Same as ``session.cancel()``."""
        await self.session.cancel()

    def _record(self, events: Sequence[Event]) -> None:
        self._events.extend(events)

    def _watch_cancel(self) -> None:
        if not self._watchdog and not self._done.is_set():
            self._watchdog = True
            self._client._tg.start_soon(self._end_if_ignored)

    async def _end_if_ignored(self) -> None:
        await anyio.sleep(CANCEL_GRACE)
        waiter = self._waiter
        if waiter is not None and not waiter.done.is_set():
            message = f"the agent did not end the cancelled turn within {CANCEL_GRACE:g} s"
            self._client._emit([self._client._notice(message)], self.session)
            waiter.resolve(error=_TurnStopped(message))

    async def _stop(self, reason: str) -> None:
        if self._stopped is None:
            self._stopped = TurnError(kind="cancelled", message=reason)
        await self.session.cancel()
        await self._done.wait()

    async def _run(self) -> None:
        waiter = self._waiter
        assert waiter is not None
        timeout = self._client.options.timeout
        with anyio.move_on_after(timeout):
            await waiter.done.wait()
        if not waiter.done.is_set():
            self._stopped = self._stopped or TurnError(
                kind="timeout", message=f"the turn took longer than {timeout:g} s"
            )
            await self.session.cancel()
            await waiter.done.wait()
        response: acp.PromptResponse | None = None
        error = self._stopped
        if isinstance(waiter.error, AgentRequestFailed):
            error = error or turn_error(waiter.error)
        elif isinstance(waiter.error, AgentCrashed):
            error = turn_error(waiter.error)
        elif waiter.error is not None:
            error = error or TurnError(kind="cancelled", message=str(waiter.error))
        elif error is None or error.kind != "timeout":
            response = waiter.result
        duration = int((time.monotonic() - self._started) * 1000)
        session = self.session
        events = session.normalizer.finish(response, error=error, duration_ms=duration)
        completion = events[-1]
        assert isinstance(completion, TurnCompleted)
        self._completion = completion
        self._client._emit(events, session)
        session._turn = None
        self._finalize(completion)
        self._done.set()

    def _finalize(self, turn: TurnCompleted) -> None:
        client = self._client
        self._result = AcpTurnResult(
            ok=turn.ok,
            answer=turn.answer,
            error=turn.error,
            stop_reason=turn.stop_reason,
            files_changed=[e for e in self._events if isinstance(e, FileChanged)],
            usage=turn.usage,
            session_id=self.session.session_id,
            duration_s=time.monotonic() - self._started,
            notices=[e for e in self._events if isinstance(e, Notice)],
            stderr_tail=client.stderr_tail,
            exit_code=client._exit_code if client._gone else None,
        )


def _single(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The one exception inside (nested) groups, if there is exactly one."""
    leaves: list[BaseException] = []
    todo: list[BaseException] = [group]
    while todo:
        exc = todo.pop()
        if isinstance(exc, BaseExceptionGroup):
            todo.extend(exc.exceptions)
        else:
            leaves.append(exc)
    return leaves[0] if len(leaves) == 1 else None


class _TurnStopped(GemwireError):
    """The client ended a turn the agent did not end."""


def turn_error(exc: AgentRequestFailed | AgentCrashed, method: str = "") -> TurnError:
    """The ``turn_completed`` error an agent's failure stands for; ``method`` prefixes the
    message (for a request that failed before any turn, say which)."""
    if isinstance(exc, AgentCrashed):
        return TurnError(kind="crashed", message=str(exc), exit_code=exc.exit_code)
    return error_for(ErrorObject(code=exc.code, message=str(exc), data=exc.data), method)


@asynccontextmanager
async def run_acp(
    prompt: Prompt,
    options: AcpOptions,
    *,
    permission_handler: PermissionHandler | None = None,
    terminal_policy: TerminalPolicy | None = None,
    credentials: Mapping[str, Any] | None = None,
) -> AsyncGenerator[AcpTurn]:
    """Start the agent, open a session (or load ``options.load_session``), set
    ``options.mode`` / ``options.model``, and send ``prompt``: one turn, start to end.

    Iterate the turn for events (``session_started`` first) and read ``turn.result``.
    Failures before the prompt raise (`AgentNotFound`, `AgentCrashed`,
    `AgentRequestFailed`); every failure after it ends in the ``turn_completed`` event.
    """
    async with AcpClient(
        options,
        permission_handler=permission_handler,
        terminal_policy=terminal_policy,
        credentials=credentials,
    ) as client:
        if options.load_session:
            session = await client.load_session(options.load_session)
        else:
            session = await client.new_session()
        if options.mode:
            await session.set_mode(options.mode)
        if options.model:
            await session.set_model(options.model)
        async with session.prompt(prompt) as turn:
            yield turn
