"""A Codex rollout record's payload, decoded by the record's type (`payload_of`).

Sans-IO. The lines themselves are `JsonlRecords` of `gemwire.wire.codex_session.Record`,
whose ``payload`` stays raw; it is decoded here, when read, into the type the record's
``type`` names. A record type gemwire does not know is ``None`` (kept raw: the normalizer
says it is unknown), a payload that is not what its type says is `Unreadable` (why), never
an exception.
"""

from __future__ import annotations

import re
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
    TokenUsageRecord,
    TurnContext,
)

__all__ = ("Unreadable", "item_type", "payload_of", "payload_type")


class Unreadable(NamedTuple):
    """A payload that is not what its record's type says."""

    message: str


_DECODERS: dict[str, Callable[[bytes], Payload]] = {
    "session_meta": msgspec.json.Decoder(SessionMeta).decode,
    "turn_context": msgspec.json.Decoder(TurnContext).decode,
    "response_item": msgspec.json.Decoder(ResponseItem).decode,
    "event_msg": msgspec.json.Decoder(EventMsg).decode,
    "token_usage_record": msgspec.json.Decoder(TokenUsageRecord).decode,
}


class _Typed(msgspec.Struct, frozen=True, gc=False):
    type: str | None = None


_decode_type = msgspec.json.Decoder(_Typed).decode


_TYPE_FIRST = re.compile(rb'\{"type":"([a-z_]{1,40})"')


def payload_type(record: Record) -> str | None:
    """The ``type`` of ``record``'s payload (an event's kind: ``user_message``,
    ``token_count``, …), the rest of it skipped unbuilt; ``None`` if it has none. Codex
    writes it first: read there when it is, else decoded.

    >>> record = msgspec.json.decode(
    ...     b'{"type":"event_msg","payload":{"message":"Hi","type":"agent_message"}}', type=Record
    ... )
    >>> payload_type(record)
    'agent_message'
    """
    first = _TYPE_FIRST.match(memoryview(record.payload)[:64])
    if first is not None:
        return first[1].decode()
    try:
        found = _decode_type(record.payload).type
    except UNDECODABLE:
        return None
    return found if isinstance(found, str) else None


class _Item(msgspec.Struct, frozen=True, gc=False):
    item: _Typed | None = None


_decode_item = msgspec.json.Decoder(_Item).decode

_ITEM_TYPE = re.compile(rb'"item":\{"type":"([A-Za-z]{1,40})"')


def item_type(record: Record) -> str | None:
    """The ``type`` of an ``item_completed`` event's item (Codex 0.166: ``UserMessage``,
    ``AgentMessage``, …), the rest of it skipped unbuilt; ``None`` for any other record.
    Codex writes it after the thread's and turn's ids: read there when it is, else decoded.

    >>> record = msgspec.json.decode(
    ...     b'{"type":"event_msg","payload":{"type":"item_completed","thread_id":"t",'
    ...     b'"item":{"type":"UserMessage","content":[]}}}',
    ...     type=Record,
    ... )
    >>> item_type(record)
    'UserMessage'
    """
    if record.type != "event_msg" or payload_type(record) != "item_completed":
        return None
    found = _ITEM_TYPE.search(memoryview(record.payload)[:256])
    if found is not None:
        return found[1].decode()
    try:
        item = _decode_item(record.payload).item
    except UNDECODABLE:
        return None
    return item.type if item is not None and isinstance(item.type, str) else None


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
