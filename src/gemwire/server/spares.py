"""Agents started ahead (`SpareAgents`): a new session on a warm agent starts at once.

An agent process takes about a second to start (Node, its modules, its settings), and a
fresh Gemini CLI then takes 150-300 ms to answer its first ``initialize`` and 60-100 ms to
open a session: together far longer than the rest of a session's first answer. ``gemwire
serve --warm gemini`` keeps one agent of each named kind started, primed and waiting; a new
session of that agent is handed the waiting process. The next one starts once that session
has its first answer (anything the agent says after its first prompt), has ended, or
another session of that agent found no spare: starting an agent takes a core for a second,
which on a small machine slowed the first prompt by a third (BENCHMARKS.md). A spare
costs what an idle agent with one open session costs (Gemini CLI 0.61.0: about 225 MiB in
its two processes, 15 MiB of it the session), which is why it is asked for by name.

Priming: once started, a spare is sent the ``initialize`` a session's `AcpClient` sends
(`initialize_request`, with its request id: the same bytes), then the ``session/new`` that
client sends for the server's first root, the folder of a session that names none
(`session_params`; a folder every server has, and one that does not go away, as the last
session's might). Their answers are kept, with everything the agent says meanwhile and
after. The channel a session gets (`_Handed`) answers the client's own ``initialize``
from what was kept when its bytes are the ones sent ahead, and its ``session/new`` the
same way; the agent's other messages reach the client in the order the agent sent them.
Any other request goes to the agent: a session in another folder, or one that continues a
saved session, still skips ``initialize``, and the session opened ahead stays unused in
that agent (closed, where the agent offers ``session/close``), none of its messages
reaching the client.

Who gets a primed spare is decided when it is handed out (`SpareAgents.session_channel`):
a session's client, whose ``initialize`` is the one sent ahead. Any other client (the ACP
endpoint's, whose ``initialize`` is its own) gets a new agent.

A spare is started in the first root (the process's working folder); an ACP agent is told
its session's folder in ``session/new``. A session that comes while the spare is still
being started or primed gets a new agent. A spare that ends while it waits, or whose
priming fails (an error answer, no answer within ``request_timeout``, the agent's end), is
never handed out; its agent is taken to be broken, said in the log, and not started ahead
again.

`SpareAgents` wraps the launcher the server was given (an `AgentLauncher` itself) and is
entered for the server's life: its task group holds the spares, and leaving it stops them.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from typing import Self

import anyio
import msgspec
from anyio import AsyncContextManagerMixin
from anyio.abc import TaskGroup, TaskStatus

from gemwire._normalize.masking import Masker, known_secrets
from gemwire.errors import AgentCrashed, AgentProtocolViolated, AgentRequestFailed, RunTimedOut
from gemwire.protocol import acp as protocol
from gemwire.protocol.acp.remote import peek
from gemwire.runners.acp import AcpOptions, AgentChannel
from gemwire.runners.acp.channel import CLOSE_GRACE, Framing
from gemwire.runners.acp.client import initialize_request
from gemwire.runners.acp.session import session_params
from gemwire.server.agents import AgentEntry, AgentLauncher
from gemwire.wire import acp

__all__ = ("SpareAgents",)

logger = logging.getLogger("gemwire.server")

_CLOSE_ID = "gemwire-spare"
"""The id of the ``session/close`` of a spare's unused session: a string, where the
client's ids are numbers; its answer is dropped."""


def _client_initialize(options: AcpOptions) -> bytes:
    """The ``initialize`` a session's client of ``options`` sends first (request id 0)."""
    connection = protocol.AcpClientConnection(max_line_bytes=options.max_line_bytes)
    request = initialize_request(options, terminal=False, elicitation=False)
    return connection.send_call(protocol.initialize(request))[1]


class _Messages:
    """Cuts what a channel receives into whole messages, each as it came (a line with its
    newline). A line longer than ``max_bytes`` is not held: it passes in pieces."""

    def __init__(self, framing: Framing, max_bytes: int) -> None:
        self._lines = framing == "lines"
        self._max = max_bytes
        self._held: list[bytes] = []
        self._size = 0

    def feed(self, data: bytes) -> list[bytes]:
        if not self._lines:
            return [data]
        out: list[bytes] = []
        start = 0
        while (newline := data.find(b"\n", start)) != -1:
            self._held.append(data[start : newline + 1])
            out += self.rest()
            start = newline + 1
        if start < len(data):
            self._held.append(data[start:])
            self._size += len(data) - start
            if self._size > self._max:
                out += self.rest()
        return out

    def rest(self) -> list[bytes]:
        """What is held: the start of a line whose end has not come."""
        held = [b"".join(self._held)] if self._held else []
        self._held.clear()
        self._size = 0
        return held


class _Unused:
    """What the agent says, less its notices and requests about the spare's own session
    (which the session did not take) and the answers to ``keys``, requests of the spare's
    (ids as written)."""

    def __init__(self, messages: _Messages, session_id: str, keys: frozenset[bytes]) -> None:
        self._messages = messages
        self._session_id = session_id
        self.keys = keys

    def feed(self, data: bytes) -> list[bytes]:
        return [message for message in self._messages.feed(data) if not self._drops(message)]

    def end(self) -> list[bytes]:
        return self._messages.rest()

    def _drops(self, message: bytes) -> bool:
        seen = peek(message)
        if seen is None:
            return False
        if seen.response:
            return seen.key in self.keys
        return seen.session_id == self._session_id


class _Spare:
    """A started agent, primed (`prime`) and waiting for a session; ``released`` once its
    session let it go."""

    def __init__(self, options: AcpOptions, channel: AgentChannel) -> None:
        self.options = options
        self.channel = channel
        self.said: list[bytes] = []
        """What it said, in order, for its session to read: whole messages while it was
        primed, then as it came."""
        self.initialized = 0
        """``said[:initialized]`` ends with the answer to ``initialize``."""
        self.initialize = b""
        self.new_session = b""
        """The two requests it was primed with, as sent."""
        self.session_id = ""
        self.closes = False
        """The agent offers ``session/close``."""
        self.ended = False
        self.handed = False
        self.taken = anyio.Event()
        self.watched = anyio.Event()
        """Set once nothing but its session reads it."""
        self.released = anyio.Event()
        self.closed = anyio.Event()
        self.answered = anyio.Event()
        """Its session had its first answer, ended, or another session found no spare:
        the next spare may start (not while this one's first prompt runs, which it would
        slow: starting an agent takes a core for a second)."""

    def messages(self) -> _Messages:
        """A cutter of what this spare says into messages."""
        return _Messages(self.channel.framing, self.options.max_line_bytes)

    async def prime(self) -> None:
        """Send ``initialize`` and ``session/new`` as a session's client would, and keep
        their answers; raises (a `GemwireError`) when the agent does not answer both."""
        options = self.options
        connection = protocol.AcpClientConnection(max_line_bytes=options.max_line_bytes)
        messages = self.messages()
        request = initialize_request(options, terminal=False, elicitation=False)
        self.initialize, initialized, self.initialized = await self._ask(
            connection, messages, protocol.initialize(request)
        )
        protocol.check_protocol_version(initialized)
        capabilities = initialized.agent_capabilities
        self.closes = protocol.advertises(capabilities, "session/close")
        _, _, params = session_params(options, capabilities, None, None, None)
        call = protocol.new_session(acp.NewSessionRequest(**params))
        self.new_session, opened, _ = await self._ask(connection, messages, call)
        self.session_id = opened.session_id
        self.said += messages.rest()

    async def _ask(
        self,
        connection: protocol.AcpClientConnection,
        messages: _Messages,
        call: protocol.Call[protocol.R],
    ) -> tuple[bytes, protocol.R, int]:
        """Send ``call``: the request as sent, its answer, and where in `said` the answer
        ends (what is read with it is kept there too)."""
        request_id, request = connection.send_call(call)
        key = msgspec.json.encode(request_id)
        await self.channel.send(request)
        timeout = self.options.request_timeout
        items: list[protocol.AcpItem] = []
        answered = 0
        with anyio.move_on_after(timeout):
            while not items:
                data = await self.channel.receive()
                if not data:
                    why = _why_ended(self.channel)
                    raise AgentCrashed(f"it ended before answering {call.method}: {why}")
                for message in messages.feed(data):
                    self.said.append(message)
                    seen = peek(message)
                    if not items and seen is not None and seen.response and seen.key == key:
                        items = connection.receive_message(message)
                        answered = len(self.said)
            match items:
                case [protocol.AgentResult(result=result)]:
                    return request, result, answered
                case [protocol.AgentError(error=error)]:
                    masker = Masker(known_secrets(self.options.environment()))
                    raise AgentRequestFailed(
                        f"it answered {call.method} with an error: {masker.text(error.message)}",
                        method=call.method,
                        code=error.code,
                    )
                case _:
                    raise AgentProtocolViolated(f"its answer to {call.method} is unreadable")
        raise RunTimedOut(f"it did not answer {call.method} within {timeout:g} s")


class _Handed:
    """The channel a session gets for a spare (see the module docstring): already open;
    leaving it stops the agent (in the task that started it, as anyio wants) and waits
    until it has."""

    def __init__(self, spare: _Spare) -> None:
        self._spare = spare
        self._channel = spare.channel
        self._asked = 0
        """The client's requests taken for the two the spare was primed with."""
        self._next: deque[bytes] = deque()
        self._live = False
        """The client reads on from the agent (through `_unused` when it is set)."""
        self._unused: _Unused | None = None
        self._changed = anyio.Event()
        self._prompted = False

    @property
    def framing(self) -> Framing:
        return self._channel.framing

    @property
    def stderr_tail(self) -> str | None:
        return self._channel.stderr_tail

    @property
    def exit_code(self) -> int | None:
        return self._channel.exit_code

    @property
    def close_reason(self) -> str | None:
        return self._channel.close_reason

    async def send(self, data: bytes) -> None:
        spare = self._spare
        if self._asked == 0:
            await spare.watched.wait()  # what the spare said is all in `said`
            self._asked = 1
            if data == spare.initialize:
                self._release(spare.said[: spare.initialized])
            else:  # not a session's client (session_channel hands none to another)
                await self._instead(data, spare.said[: spare.initialized])
        elif self._asked == 1 and _is_request(data):
            self._asked = 2
            if data == spare.new_session:
                self._release(spare.said[spare.initialized :], live=True)
            else:
                await self._instead(data, [])
        else:
            if not self._prompted:
                seen = peek(data)
                self._prompted = seen is not None and seen.method == "session/prompt"
            await self._channel.send(data)

    async def _instead(self, data: bytes, head: list[bytes]) -> None:
        """The client asked something else: the agent answers it. The spare's session goes
        unused (closed where the agent can), and the answers kept that the client did not
        ask for (any in ``head``: ``initialize``'s) never reach it."""
        spare = self._spare
        self._asked = 2
        await self._channel.send(data)
        if spare.closes:
            close = {"jsonrpc": "2.0", "id": _CLOSE_ID, "method": "session/close"}
            params = acp.CloseSessionRequest(session_id=spare.session_id)
            await self._channel.send(msgspec.json.encode({**close, "params": params}) + b"\n")
        before = _Unused(spare.messages(), spare.session_id, frozenset({b"0"}))
        kept = [m for piece in head for m in before.feed(piece)] + before.end()
        after = self._unused = _Unused(spare.messages(), spare.session_id, frozenset({b"1"}))
        kept += [m for piece in spare.said[spare.initialized :] for m in after.feed(piece)]
        after.keys = frozenset({msgspec.json.encode(_CLOSE_ID)})  # the client's own from now on
        self._release(kept, live=True)

    def _release(self, messages: list[bytes], *, live: bool = False) -> None:
        if self.framing == "messages":
            self._next += messages
        elif messages:  # read at once, as the spare read them (one chunk of a pipe)
            self._next.append(b"".join(messages))
        self._live = live
        if live:
            self._spare.said = []  # all of it given (or dropped)
        self._changed.set()
        self._changed = anyio.Event()

    async def receive(self) -> bytes:
        if not self._spare.watched.is_set():
            await self._spare.watched.wait()
        while not (self._next or self._live):
            await self._changed.wait()
        if self._next:
            return self._next.popleft()
        if self._unused is None:
            data = await self._channel.receive()
        else:
            while True:
                received = await self._channel.receive()
                kept = self._unused.feed(received) if received else self._unused.end()
                if kept or not received:
                    data = b"".join(kept)
                    break
        if self._prompted:
            self._spare.answered.set()
        return data

    async def close(self, grace: float) -> None:
        self._release([], live=True)  # the reader reads on to the agent's end
        await self._channel.close(grace)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._spare.released.set()
        self._spare.answered.set()
        with anyio.CancelScope(shield=True):
            await self._spare.closed.wait()


def _is_request(data: bytes) -> bool:
    seen = peek(data)
    return seen is not None and seen.request


class SpareAgents(AsyncContextManagerMixin):
    """``launcher``, with one agent of each of ``warm`` started and primed ahead in
    ``cwd`` (the server's first root)."""

    def __init__(self, launcher: AgentLauncher, warm: Sequence[str], cwd: str) -> None:
        self._launcher = launcher
        self._warm = tuple(dict.fromkeys(warm))
        self._cwd = cwd
        self._ready: dict[str, _Spare] = {}
        self._taken: dict[str, _Spare] = {}
        """Spares handed out whose next has not started yet."""
        self._tg: TaskGroup | None = None

    def agents(self) -> list[AgentEntry]:
        return self._launcher.agents()

    def options(self, name: str, cwd: str) -> AcpOptions:
        return self._launcher.options(name, cwd)

    def channel(self, options: AcpOptions) -> AgentChannel:
        """A new agent: for a client other than a session's (the ACP endpoint's), whose
        ``initialize`` is its own, where a spare has had a session's already."""
        return self._launcher.channel(options)

    def session_channel(self, options: AcpOptions) -> AgentChannel:
        """The channel of a session's client, ``AcpClient(options, channel=...)`` without
        a terminal policy or an elicitation handler: a spare of the same agent (its
        folder aside) primed with the ``initialize`` that client sends, else a new agent."""
        initialize = _client_initialize(options)
        kind = msgspec.structs.replace(options, cwd=self._cwd)
        for name, spare in self._ready.items():
            if kind == spare.options and spare.initialize == initialize:
                del self._ready[name]
                spare.handed = True
                spare.taken.set()
                return _Handed(spare)
        for spare in self._taken.values():
            if kind == spare.options:  # the next spare waits no longer
                spare.answered.set()
        return self._launcher.channel(options)

    @asynccontextmanager
    async def __asynccontextmanager__(self) -> AsyncGenerator[Self]:
        async with anyio.create_task_group() as self._tg:
            for name in self._warm:
                self._tg.start_soon(self._keep, name)
            try:
                yield self
            finally:
                self._tg.cancel_scope.cancel()

    async def _keep(self, name: str) -> None:
        """Keeps one spare of ``name`` waiting: the next starts once the one taken is
        `_Spare.answered`."""
        assert self._tg is not None
        while True:
            try:
                spare: _Spare = await self._tg.start(self._hold, name)
            except Exception as exc:  # noqa: BLE001 - its sessions start it themselves, and say why
                logger.warning("gemwire serve: no spare %s agent: %s", name, exc)
                return
            await spare.taken.wait()
            if spare.ended:
                return
            self._taken[name] = spare
            await spare.answered.wait()
            del self._taken[name]

    async def _hold(self, name: str, *, task_status: TaskStatus[_Spare]) -> None:
        """Starts a spare, primes it and holds it (open) until its session releases it;
        one that ends while it waits is no spare (the agent is broken: said once, and not
        restarted)."""
        options = self._launcher.options(name, self._cwd)
        spare = _Spare(options, self._launcher.channel(options))
        try:
            async with spare.channel:
                try:
                    await spare.prime()
                    self._ready[name] = spare
                    task_status.started(spare)
                    async with anyio.create_task_group() as watching:
                        watching.start_soon(self._watch, name, spare)
                        await spare.taken.wait()
                        watching.cancel_scope.cancel()
                    spare.watched.set()
                    await spare.released.wait()
                finally:
                    if not spare.handed:  # else its session's client closed it
                        with anyio.CancelScope(shield=True):
                            await spare.channel.close(CLOSE_GRACE)
        finally:
            if self._ready.get(name) is spare:
                del self._ready[name]
            spare.closed.set()

    async def _watch(self, name: str, spare: _Spare) -> None:
        """Reads what the spare says before its session does (kept for the session), to
        see it end."""
        while data := await spare.channel.receive():
            spare.said.append(data)
        del self._ready[name]
        spare.ended = True
        spare.taken.set()
        spare.released.set()
        logger.warning(
            "gemwire serve: the spare %s agent ended before a session used it: %s",
            name,
            _why_ended(spare.channel),
        )


def _why_ended(channel: AgentChannel) -> str:
    if channel.stderr_tail:
        return channel.stderr_tail
    if channel.exit_code is not None:
        return f"exit code {channel.exit_code}"
    return channel.close_reason or "it closed its output"
