"""A saved session's messages, kept as recorded lines and decoded only when read.

A decoded message takes two to three times the bytes of its line (many small objects), so a loaded conversation keeps each message's final line instead and `Messages`
decodes it on the way out: one message at a time while its events are mapped, which is
also faster than building them all first. A line is only kept undecoded once it is known
to be valid JSON and UTF-8 with a string ``id`` (what the replay needs to place it); the
rest of the decision (does it fit `MessageRecord`, else a `RawMessage`) is the one the
replay would have made at once, made later.

One difference: msgspec refuses a number beyond a double's range (``1e999``) when it
decodes it, not when it skips it, so a message holding one in a known field, decoded at once,
is a `Problem` (not JSON) that leaves the earlier version in place; kept as a line, it becomes
a `RawMessage` saying so. Gemini CLI never writes such a number (``JSON.stringify`` writes
``null`` for infinities).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

import msgspec

from gemwire.protocol._undecodable import UNDECODABLE, why_undecodable
from gemwire.protocol.gemini_content import is_resumable
from gemwire.wire.gemini_session import MessageRecord

__all__ = (
    "MessageId",
    "Messages",
    "RawMessage",
    "SessionMessage",
    "converted",
    "decode_message_id",
    "message_of",
    "record_verdict",
    "verdict_of",
)


class RawMessage(msgspec.Struct, frozen=True, kw_only=True):
    """A message record whose shape does not fit `MessageRecord`: kept raw, never dropped."""

    id: str
    type: str | None
    raw: str
    reason: str


SessionMessage = MessageRecord | RawMessage


class MessageId(msgspec.Struct, frozen=True):
    """A message line decoded only as far as its ``id`` (the rest is checked, not built)."""

    id: str


_decode_message = msgspec.json.Decoder(MessageRecord).decode
_decode_any = msgspec.json.Decoder().decode
decode_message_id = msgspec.json.Decoder(MessageId).decode
"""A message line decoded only as far as its ``id`` (``.id``)."""


def converted(record: dict[str, Any], message_type: type = MessageRecord) -> Any:
    """The message a decoded record is: ``message_type``, or a `RawMessage` saying why not."""
    try:
        return msgspec.convert(record, message_type)
    except msgspec.ValidationError as exc:
        kind = record.get("type")
        return RawMessage(
            id=record["id"],
            type=kind if isinstance(kind, str) else None,
            raw=msgspec.json.encode(record).decode(),
            reason=f"unexpected shape: {exc}",
        )


def record_verdict(record: dict[str, Any]) -> bool:
    """Gemini's ``isResumableMessageRecord`` on a decoded record."""
    return is_resumable(
        record.get("type"), record.get("content"), record.get("toolCalls"), record.get("thoughts")
    )


def _record(line: bytes) -> dict[str, Any] | RawMessage:
    """A kept line that does not fit `MessageRecord`, decoded as any JSON."""
    try:
        record: dict[str, Any] = _decode_any(line)
    except UNDECODABLE as exc:  # see the module's docstring
        return RawMessage(
            id=decode_message_id(line).id,
            type=None,
            raw=line.decode(),
            reason=f"not JSON ({why_undecodable(exc)})",
        )
    return record


def message_of(entry: bytes | SessionMessage) -> SessionMessage:
    """A kept message, decoded if it was kept as its line."""
    if not isinstance(entry, bytes):
        return entry
    try:
        return _decode_message(entry)
    except UNDECODABLE:
        record = _record(entry)
        return record if isinstance(record, RawMessage) else converted(record)


def verdict_of(entry: bytes | MessageRecord) -> bool:
    """Gemini's ``isResumableMessageRecord`` on a kept line or a decoded `MessageRecord`."""
    if isinstance(entry, bytes):
        try:
            message = _decode_message(entry)
        except UNDECODABLE:
            record = _record(entry)
            return not isinstance(record, RawMessage) and record_verdict(record)
    else:
        message = entry
    return is_resumable(message.type, message.content, message.toolCalls, message.thoughts)


class Messages(Sequence[Any]):
    """A conversation's messages in order, each decoded from its line whenever it is read.

    Reading them twice decodes them twice; ``list(messages)`` keeps them decoded.
    """

    __slots__ = ("_entries",)

    def __init__(self, entries: list[Any]) -> None:
        self._entries = entries

    def __len__(self) -> int:
        return len(self._entries)

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [message_of(entry) for entry in self._entries[index]]
        return message_of(self._entries[index])

    def __iter__(self) -> Iterator[Any]:
        return map(message_of, self._entries)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Messages | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))
