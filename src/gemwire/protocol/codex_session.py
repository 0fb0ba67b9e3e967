"""A Codex rollout record's payload, decoded by the record's type (`payload_of`).

Sans-IO. The lines themselves are `JsonlRecords` of `gemwire.wire.codex_session.Record`,
whose ``payload`` stays raw; it is decoded here, when read, into the type the record's
``type`` names. A record type gemwire does not know is ``None`` (kept raw: the normalizer
says it is unknown), a payload that is not what its type says is `Unreadable` (why), never
an exception.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import msgspec

from gemwire.protocol._undecodable import UNDECODABLE, why_undecodable
from gemwire.wire.codex_session import (
    EventMsg,
    Payload,
    Record,
    ResponseItem,
    SessionMeta,
    TurnContext,
)

__all__ = ("Unreadable", "payload_of")


class Unreadable(NamedTuple):
    """A payload that is not what its record's type says."""

    message: str


_DECODERS: dict[str, Callable[[bytes], Payload]] = {
    "session_meta": msgspec.json.Decoder(SessionMeta).decode,
    "turn_context": msgspec.json.Decoder(TurnContext).decode,
    "response_item": msgspec.json.Decoder(ResponseItem).decode,
    "event_msg": msgspec.json.Decoder(EventMsg).decode,
}


def payload_of(record: Record) -> Payload | Unreadable | None:
    """The payload of ``record``, by its type.

    >>> record = msgspec.json.decode(
    ...     b'{"type":"event_msg","payload":{"type":"agent_message","message":"Hi"}}', type=Record
    ... )
    >>> payload = payload_of(record)
    >>> type(payload).__name__, payload.message
    ('EventMsg', 'Hi')
    >>> payload_of(msgspec.structs.replace(record, type="compacted")) is None
    True
    >>> payload_of(msgspec.structs.replace(record, type="session_meta"))
    Unreadable(message='Object missing required field `id`')
    """
    decode = _DECODERS.get(record.type)
    if decode is None:
        return None
    try:
        return decode(record.payload)
    except UNDECODABLE as exc:
        return Unreadable(why_undecodable(exc))
