"""The JSON-RPC peer: the agent's channel and the client's requests in flight.

`AgentPeer` writes what the sans-IO `AcpClientConnection` produces to the agent's
`AgentChannel`, reads what the channel receives and hands every item the connection decodes to the client — except the answers
to the client's own requests, which resolve their `Pending`. A request the caller gives up
on (its timeout, a cancelled scope) is abandoned (`abandon`): ``$/cancel_request`` tells
the agent, and its late answer (error -32800, or a result) is dropped. It never dies on input:
the connection turns whatever it cannot decode into records, and anything else that goes
wrong with one chunk becomes a `ProtocolViolation` handed on like the rest. When the
agent's output ends, every request still waiting fails with `AgentCrashed`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar, cast

import anyio

from gemwire._normalize.masking import Masker
from gemwire.errors import AgentCrashed, AgentRequestFailed, GemwireError, RunTimedOut
from gemwire.protocol.acp import (
    AcpClientConnection,
    AcpItem,
    AgentError,
    AgentResult,
    Call,
    ProtocolViolation,
)
from gemwire.runners.acp.channel import CLOSE_GRACE, AgentChannel
from gemwire.wire import acp
from gemwire.wire.jsonrpc import RequestId

__all__ = ("CLOSE_GRACE", "AgentPeer", "Pending")

R = TypeVar("R")


class Pending(Generic[R]):
    """One request waiting for its answer (or for the agent's end)."""

    __slots__ = ("_done", "_error", "_result", "method", "request_id")

    def __init__(self, request_id: RequestId, method: str) -> None:
        self.request_id = request_id
        self.method = method
        self._done = anyio.Event()
        self._result: R | None = None
        self._error: GemwireError | None = None

    @property
    def done(self) -> bool:
        return self._done.is_set()

    @property
    def error(self) -> GemwireError | None:
        return self._error

    def resolve(self, result: Any = None, error: GemwireError | None = None) -> None:
        if not self._done.is_set():
            self._result, self._error = cast(R, result), error
            self._done.set()

    async def wait(self) -> None:
        await self._done.wait()

    def outcome(self) -> R:
        """The result, or the error raised; only once `done`."""
        if self._error is not None:
            raise self._error
        return cast(R, self._result)


class AgentPeer:
    """See the module docstring. ``masker`` masks the secrets gemwire knows in the stderr
    tail and in every error the agent answers with; the client's sessions mask their
    events with it."""

    def __init__(
        self,
        channel: AgentChannel,
        connection: AcpClientConnection,
        *,
        masker: Masker,
    ) -> None:
        self._channel = channel
        self._conn = connection
        self.masker = masker
        self._pending: dict[RequestId, Pending[Any]] = {}
        self._write_lock = anyio.Lock()
        self._messages = channel.framing == "messages"
        self.exited = anyio.Event()
        """Set once the agent's output ended (it exited, or closed its stdout)."""
        self.control_requests = 0
        """Requests other than turns still waiting: their answers must be read even
        while a slow consumer holds the reader back."""

    @property
    def gone(self) -> bool:
        return self.exited.is_set()

    @property
    def exit_code(self) -> int | None:
        return self._channel.exit_code

    @property
    def stderr_tail(self) -> str:
        """The agent's last lines on stderr, masked ("" where the channel has none)."""
        tail = self._channel.stderr_tail
        return self.mask(tail) if tail else ""

    def mask(self, text: str) -> str:
        return self.masker.text(text)

    async def send(self, call: Call[R]) -> Pending[R]:
        """Send a request; its `Pending` is resolved by the answer or by the agent's end."""
        if self.gone:
            raise self.crashed(call.method)
        request_id, data = self._conn.send_call(call)
        pending: Pending[R] = Pending(request_id, call.method)
        self._pending[request_id] = pending
        await self.write(data)
        return pending

    async def call(self, call: Call[R], timeout: float | None) -> R:  # noqa: ASYNC109 - per request
        """Send a request and wait for its answer, at most ``timeout`` seconds (then
        `RunTimedOut`); an error answer raises `AgentRequestFailed`. Given up on (the
        timeout, or the caller's scope cancelled), the request is abandoned (`abandon`)."""
        self.control_requests += 1
        pending: Pending[R] | None = None
        try:
            pending = await self.send(call)
            with anyio.move_on_after(timeout):
                await pending.wait()
            if not pending.done:
                error = RunTimedOut(f"the agent did not answer {call.method} within {timeout:g} s")
                await self.abandon(pending, error)
            return pending.outcome()
        except anyio.get_cancelled_exc_class():
            if pending is not None and not pending.done:
                with anyio.move_on_after(CLOSE_GRACE, shield=True):
                    await self.abandon(pending, GemwireError(f"{call.method} was abandoned"))
            raise
        finally:
            self.control_requests -= 1

    async def abandon(self, pending: Pending[Any], error: GemwireError) -> None:
        """Give up on a request: it fails with ``error`` now, and ``$/cancel_request`` asks
        the agent to stop its work. The request stays known, so its late answer is dropped
        rather than taken for a violation."""
        if pending.done:
            return
        pending.resolve(error=error)
        params = acp.CancelRequestNotification(request_id=pending.request_id)
        await self.notify(acp.PROTOCOL_METHODS["cancel_request"], params)

    async def notify(self, method: str, params: Any) -> None:
        if not self.gone:
            await self.write(self._conn.send_notification(method, params))

    async def reply(self, request_id: RequestId, result: Any) -> None:
        await self.write(self._conn.send_result(request_id, result))

    async def reply_error(
        self, request_id: RequestId, code: int, message: str, data: Any = None
    ) -> None:
        await self.write(self._conn.send_error(request_id, code, message, data))

    async def write(self, data: bytes) -> None:
        # If the agent is gone, the reader sees the end of its output and fails what waits.
        async with self._write_lock:
            await self._channel.send(data)

    def crashed(self, method: str) -> AgentCrashed:
        code = self.exit_code
        reason = self._channel.close_reason
        if code is not None:
            status = f"exited with code {code}"
        elif reason:
            status = f"closed the connection ({self.mask(reason)})"
        else:
            status = "closed its output"
        return AgentCrashed(f"the agent {status} before answering {method}", exit_code=code)

    async def read(
        self,
        may_read: Callable[[], Awaitable[None]],
        on_item: Callable[[AcpItem], None],
    ) -> None:
        """Read until the agent's output ends; ``may_read`` holds the reader back while
        consumers are behind."""
        conn = self._conn
        while True:
            await may_read()
            data = await self._channel.receive()
            try:
                items = (
                    conn.receive_message(data)
                    if self._messages and data
                    else conn.receive_data(data)
                )
            except Exception as exc:  # noqa: BLE001 - one bad chunk must not end the stream
                items = [ProtocolViolation(reason=f"unreadable output: {exc!r}", line="")]
            for item in items:
                self._take(item, on_item)
            if not data:
                break
        self.exited.set()
        self._conn.close_pending()
        pending, self._pending = self._pending, {}
        for waiting in pending.values():
            waiting.resolve(error=self.crashed(waiting.method))

    def _take(self, item: AcpItem, on_item: Callable[[AcpItem], None]) -> None:
        match item:
            case AgentResult():
                pending = self._pending.pop(item.id, None)
                if pending is not None:
                    pending.resolve(result=item.result)
            case AgentError():
                pending = self._pending.pop(item.id, None)
                if pending is not None:
                    error = AgentRequestFailed(
                        self.mask(item.error.message),
                        method=item.method,
                        code=item.error.code,
                        data=self.masker.data(item.error.data),
                    )
                    pending.resolve(error=error)
            case _:
                on_item(item)
