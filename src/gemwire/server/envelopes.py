"""The envelope every session event travels in: ``{"seq": N, "event": ...}``.

``seq`` counts from 1 per server session, never reused (also across restarts: it is in
the log). Server state the event vocabulary lacks goes in an envelope of its own kind,
``{"seq": N, "state": {"status": ...}}``; clients skip kinds they do not know.

    >>> from gemwire.events import MessageDelta
    >>> event_envelope(3, MessageDelta(agent="acp:x", text="hi"))
    b'{"seq":3,"event":{"type":"message_delta","agent":"acp:x","session_id":null,"text":"hi"}}'
    >>> state_envelope(4, SessionState(status="idle"))
    b'{"seq":4,"state":{"status":"idle"}}'
"""

from __future__ import annotations

import msgspec
from starlette.requests import HTTPConnection

from gemwire.events import Event
from gemwire.serve_api import Status
from gemwire.server.responses import BadRequest

__all__ = (
    "EventEnvelope",
    "SessionState",
    "StateEnvelope",
    "Status",
    "after_seq",
    "event_envelope",
    "state_envelope",
)

_encoder = msgspec.json.Encoder()


class SessionState(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    status: Status
    detail: str | None = None
    """Why, for ``stopped``: ``idle timeout``, ``the agent exited``, ``server shutdown``."""


class EventEnvelope(msgspec.Struct, frozen=True, kw_only=True):
    seq: int
    event: Event


class StateEnvelope(msgspec.Struct, frozen=True, kw_only=True):
    seq: int
    state: SessionState


def event_envelope(seq: int, event: Event) -> bytes:
    return b'{"seq":%d,"event":%b}' % (seq, _encoder.encode(event))


def state_envelope(seq: int, state: SessionState) -> bytes:
    return b'{"seq":%d,"state":%b}' % (seq, _encoder.encode(state))


def after_seq(connection: HTTPConnection) -> int:
    """The seq a stream resumes after: ``?after=N``, else SSE's ``Last-Event-ID``, else 0.

    Only ASCII digits, at most 18 (``int`` of a longer one can raise, or take long): else
    `BadRequest` quoting the first 40 characters.
    """
    raw = connection.query_params.get("after") or connection.headers.get("last-event-id") or "0"
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 18):
        raise BadRequest(f"after must be a sequence number, not {raw[:40]!r}")
    return int(raw)
