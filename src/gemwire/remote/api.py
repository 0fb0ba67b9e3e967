"""The HTTP side of `gemwire.remote`: requests, the one place the API's JSON errors
become `gemwire.errors`, and a session's event stream followed across drops.

Every error the server answers with (``{"error": {"kind", "message"}}``) is raised as
`RemoteError` (``.kind``, ``.status``); a server that cannot be reached, or a stream that
stays down through every attempt of the `Reconnect` policy, as `ServerUnreachable`,
chained ``from`` httpx's error. A stream is read with `protocol.sse.SseDecoder`: a message
over ``max_event_bytes`` is read past, never held, and raised as `RemoteError` of kind
``too_large``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

import anyio
import msgspec

from gemwire.errors import RemoteError, ServerUnreachable
from gemwire.protocol._undecodable import UNDECODABLE
from gemwire.protocol.framing import DEFAULT_MAX_LINE_BYTES, OversizedLine
from gemwire.protocol.sse import SseDecoder, SseEvent
from gemwire.remote._extra import httpx
from gemwire.remote.models import Envelope, decode_envelope
from gemwire.serve_api import ErrorBody

__all__ = ("ApiClient", "Reconnect")

T = TypeVar("T")

_SERVER_BUSY = frozenset({502, 503, 504})
"""Statuses a stream is retried on (a restarting server, a proxy in between)."""


class Reconnect(msgspec.Struct, frozen=True, kw_only=True):
    """How a dropped event stream is reopened: up to ``attempts`` times in a row, waiting
    ``backoff`` seconds before the first and twice as long before each next one (at most
    ``max_backoff``). An event received resets the count."""

    attempts: int = 5
    backoff: float = 0.25
    max_backoff: float = 5.0

    def delay(self, attempt: int) -> float:
        """Seconds to wait before reconnection ``attempt`` (1-based).

        >>> [Reconnect().delay(n) for n in (1, 2, 3, 6, 10)]
        [0.25, 0.5, 1.0, 5.0, 5.0]
        """
        return min(self.backoff * 2.0 ** (attempt - 1), self.max_backoff)


def _error(response: httpx.Response) -> RemoteError:
    """The `RemoteError` of a response that is not a success."""
    try:
        body = msgspec.json.decode(response.content, type=ErrorBody).error
        kind, message = body.kind, body.message or response.reason_phrase
    except UNDECODABLE:
        kind, message = "internal", response.text[:200] or response.reason_phrase
    request = response.request
    return RemoteError(
        f"{request.method} {request.url.path}: {response.status_code} {message}",
        kind=kind,
        status=response.status_code,
    )


class ApiClient:
    """Requests to one server, with its token; ``http`` is the httpx client (the
    ``transport`` of `connect` is its seam)."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        reconnect: Reconnect,
        *,
        max_event_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        self.http = http
        self.reconnect = reconnect
        self.max_event_bytes = max_event_bytes
        """The cap on one stream message, as on an agent's line (`DEFAULT_MAX_LINE_BYTES`)."""

    async def call(
        self,
        method: str,
        path: str,
        into: type[T],
        *,
        json: msgspec.Struct | None = None,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> T:
        """The JSON answer to one request (its body ``json``, a `gemwire.serve_api`
        Struct), decoded as ``into``."""
        content = None
        if json is not None:
            content = msgspec.json.encode(json)
            headers = {**(headers or {}), "Content-Type": "application/json"}
        try:
            response = await self.http.request(
                method, path, content=content, params=params, headers=headers
            )
        except httpx.RequestError as exc:
            raise ServerUnreachable(f"{method} {path}: {exc!r}") from exc
        if response.is_error:
            raise _error(response)
        try:
            return msgspec.json.decode(response.content, type=into)
        except UNDECODABLE as exc:
            raise RemoteError(
                f"{method} {path}: the server's answer is not what the API says: {exc}",
                kind="protocol",
                status=response.status_code,
            ) from exc

    async def follow(
        self, path: str, after: int, take: Callable[[Envelope], Awaitable[bool]]
    ) -> int:
        """Read the SSE stream at ``path`` from seq ``after`` on, giving each envelope to
        ``take`` until it returns true; returns the last seq taken. A stream that drops
        (or ends) before that is reopened with ``?after=`` the last seq taken, so every
        envelope comes exactly once."""
        attempt = 0
        while True:
            start = after
            try:
                after, cause = await self._read(path, after, take)
            except httpx.RequestError as exc:  # it did not open
                cause = exc
            if cause is None:
                return after
            attempt = 1 if after > start else attempt + 1
            if attempt > self.reconnect.attempts:
                raise ServerUnreachable(
                    f"GET {path}: the event stream dropped and {self.reconnect.attempts} "
                    f"reconnections failed (after seq {after})"
                ) from cause
            await anyio.sleep(self.reconnect.delay(attempt))

    async def _read(
        self, path: str, after: int, take: Callable[[Envelope], Awaitable[bool]]
    ) -> tuple[int, BaseException | None]:
        """One stream from ``after``: the last seq taken, and why it ended early (``None``:
        ``take`` is done)."""
        headers = {"Accept": "text/event-stream"}
        params = {"after": str(after)}
        async with self.http.stream("GET", path, params=params, headers=headers) as response:
            if response.status_code in _SERVER_BUSY:
                await response.aread()
                return after, _error(response)
            if response.is_error:
                await response.aread()
                raise _error(response)
            decoder = SseDecoder(self.max_event_bytes)
            done = False
            failure: RemoteError | None = None
            try:
                # Done (or failed), the read is cancelled rather than left: httpx's byte
                # iterators then end with it (left half-read, trio warns as they are
                # collected).
                with anyio.CancelScope() as reading:
                    async for chunk in response.aiter_bytes():
                        for message in decoder.feed(chunk):
                            try:
                                envelope = self._envelope(path, message)
                            except RemoteError as exc:
                                failure = exc
                                reading.cancel()
                                break
                            if envelope is None or envelope.seq <= after:
                                continue  # a server replaying more than asked: never twice
                            after = envelope.seq
                            done = await take(envelope)
                            if done:
                                reading.cancel()
                                break
            except httpx.RequestError as exc:
                return after, exc
        if failure is not None:
            raise failure
        if done:
            return after, None
        # An event the stream ended in is dropped, as the format says; unless it was over
        # the cap: then that is why.
        for message in decoder.close():
            if isinstance(message, OversizedLine):
                raise _oversized(path, message)
        return after, ServerUnreachable(f"GET {path}: the stream ended")

    @staticmethod
    def _envelope(path: str, message: SseEvent | OversizedLine) -> Envelope | None:
        """The envelope ``message`` carries; ``None`` for an event of another name."""
        if isinstance(message, OversizedLine):
            raise _oversized(path, message)
        if message.event != "gemwire":
            return None
        try:
            return decode_envelope(message.data)
        except UNDECODABLE as exc:
            raise RemoteError(
                f"GET {path}: a stream message is not an envelope: {message.data[:200]!r}",
                kind="protocol",
            ) from exc


def _oversized(path: str, event: OversizedLine) -> RemoteError:
    """A stream's event over the cap: read past, never held; the stream is not the API's."""
    return RemoteError(
        f"GET {path}: a stream message of {event.size} bytes is over the {event.limit}-byte limit",
        kind="too_large",
    )
