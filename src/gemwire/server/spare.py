"""One agent started ahead (`Spare`), and the channel a session's client gets for it
(`Handed`): the client's own ``initialize`` and ``session/new`` answered from what the
spare was primed with, the rest passed through (see `spares`)."""

from __future__ import annotations

from collections import deque
from typing import Self

import anyio
import msgspec

from gemwire._normalize.masking import Masker, known_secrets
from gemwire.errors import AgentCrashed, AgentProtocolViolated, AgentRequestFailed, RunTimedOut
from gemwire.protocol import acp as protocol
from gemwire.protocol.acp.remote import peek
from gemwire.runners.acp import AcpOptions, AgentChannel
from gemwire.runners.acp.channel import Framing
from gemwire.runners.acp.client import initialize_request
from gemwire.runners.acp.session import session_params
from gemwire.wire import acp

__all__ = ("Handed", "Messages", "Spare", "Unused", "client_initialize", "why_ended")

_CLOSE_ID = "gemwire-spare"
"""The id of the ``session/close`` of a spare's unused session: a string, where the
client's ids are numbers; its answer is dropped."""


def client_initialize(options: AcpOptions) -> bytes:
    """The ``initialize`` a session's client of ``options`` sends first (request id 0)."""
    connection = protocol.AcpClientConnection(max_line_bytes=options.max_line_bytes)
    request = initialize_request(options, terminal=False, elicitation=False)
    return connection.send_call(protocol.initialize(request))[1]


class Messages:
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


class Unused:
    """What the agent says, less its notices and requests about the spare's own session
    (which the session did not take) and the answers to ``keys``, requests of the spare's
    (ids as written)."""

    def __init__(self, messages: Messages, session_id: str, keys: frozenset[bytes]) -> None:
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


class Spare:
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

    def messages(self) -> Messages:
        """A cutter of what this spare says into messages."""
        return Messages(self.channel.framing, self.options.max_line_bytes)

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
        messages: Messages,
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
                    why = why_ended(self.channel)
                    raise AgentCrashed(f"it ended before answering {call.method}: {why}")
                for message in messages.feed(data):
                    self.said.append(message)
                    seen = peek(message)
                    if not items and seen is not None and seen.response and seen.key == key:
                        items = connection.receive_message(message)
                        answered = len(self.said)
            match items:
                case [protocol.AgentResult(result=result)]:
                    return request, call.result_of(result), answered
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


class Handed:
    """The channel a session gets for a spare (see the module docstring): already open;
    leaving it stops the agent (in the task that started it, as anyio wants) and waits
    until it has."""

    def __init__(self, spare: Spare) -> None:
        self._spare = spare
        self._channel = spare.channel
        self._asked = 0
        """The client's requests taken for the two the spare was primed with."""
        self._next: deque[bytes] = deque()
        self._live = False
        """The client reads on from the agent (through `_unused` when it is set)."""
        self._unused: Unused | None = None
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
        before = Unused(spare.messages(), spare.session_id, frozenset({b"0"}))
        kept = [m for piece in head for m in before.feed(piece)] + before.end()
        after = self._unused = Unused(spare.messages(), spare.session_id, frozenset({b"1"}))
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


def why_ended(channel: AgentChannel) -> str:
    if channel.stderr_tail:
        return channel.stderr_tail
    if channel.exit_code is not None:
        return f"exit code {channel.exit_code}"
    return channel.close_reason or "it closed its output"
