"""Replaying a session file's records to its final state, the way Gemini CLI loads it.

`RecordReplay` is sans-IO: it is fed one line at a time (``loadConversationRecord`` in
``chatRecordingService.ts``, 0.61.0) and keeps, in insertion order, the last version of every
message:

1. a header (``sessionId`` and ``projectHash`` strings, no ``id``) merges into the metadata;
   every start writes one, so later headers win (e.g. ``startTime`` after a resume);
2. ``{"$set": {...}}`` merges into the metadata; ``$set.messages`` replaces the message list;
3. a record with a string ``id`` is a message: upserted in place;
4. ``{"$rewindTo": id}`` drops that message and every later one (all of them if not found).

One deliberate difference: when ``$set.messages`` names a message that is already known by id
(a resume replays the whole history that way, §5.4 of gemini-protocol.md), the recorded
version is kept, because the replay drops its thoughts, tokens, tool calls and diffs. What
Gemini itself would decide (is the file resumable?) is computed from the replay, exactly.

Lines Gemini skips silently (not JSON, not an object, no known shape) are reported as
`Problem`s. In ``summary`` mode messages are only classified, not kept whole (listing).
"""

from __future__ import annotations

from typing import Any

import msgspec

from gemwire._normalize.gemini_session import (
    RawMessage,
    SessionMessage,
    is_ignored_user_content,
    is_resumable,
    text_of,
)
from gemwire.wire.gemini_session import MessageRecord

__all__ = ("MessageSummary", "Problem", "RecordReplay", "legacy_record")


class Problem(msgspec.Struct, frozen=True, kw_only=True):
    """A line that was skipped (``line`` is 1-based; 0 for the whole file)."""

    line: int
    message: str


class MessageSummary(msgspec.Struct, frozen=True, kw_only=True):
    """What listing needs of a message: its type and the text of a real prompt."""

    id: str
    type: str
    prompt: str | None


class _Peek(msgspec.Struct, frozen=True, kw_only=True):
    """A message decoded only as far as listing needs (tool calls are skipped, not built)."""

    id: str
    type: Any = None
    content: Any = None
    toolCalls: Any = None
    thoughts: Any = None


class _Entry:
    """A message as kept, and what Gemini's own loader would think of its latest version."""

    __slots__ = ("message", "raw", "resumable")

    def __init__(self, message: SessionMessage | MessageSummary, resumable: bool) -> None:
        self.message = message
        self.resumable = resumable
        self.raw: bytes | dict[str, Any] | None = None


_decode_message = msgspec.json.Decoder(MessageRecord).decode
_decode_peek = msgspec.json.Decoder(_Peek).decode
_decode_any = msgspec.json.Decoder().decode
_MESSAGE_START = b'{"id":'
_REWIND_KEY = b'"$rewindTo"'


def _summary(peek: _Peek) -> MessageSummary:
    prompt = None
    if peek.type == "user":
        text = text_of(peek.content) if peek.content else ""
        if not is_ignored_user_content(text.strip()):
            prompt = text
    return MessageSummary(id=peek.id, type=str(peek.type), prompt=prompt)


class RecordReplay:
    """Feed a ``.jsonl`` session's lines; read the final metadata and messages.

    ``summary=True`` keeps `MessageSummary` objects instead of whole messages (listing);
    ``keep_raw=True`` also keeps each message as recorded (`originals`).
    """

    def __init__(self, *, summary: bool = False, keep_raw: bool = False) -> None:
        self.summary = summary
        self.keep_raw = keep_raw
        self.metadata: dict[str, Any] = {}
        self.problems: list[Problem] = []
        self._entries: dict[str, _Entry] = {}
        # Messages a ``$set.messages`` dropped: a later replay may name them again.
        self._shelved: dict[str, _Entry] = {}

    @property
    def is_session(self) -> bool:
        """Whether a header was seen (else Gemini reads the file as one legacy JSON document)."""
        return isinstance(self.metadata.get("sessionId"), str) and isinstance(
            self.metadata.get("projectHash"), str
        )

    @property
    def messages(self) -> list[Any]:
        return [entry.message for entry in self._entries.values()]

    @property
    def originals(self) -> list[Any]:
        """The kept messages exactly as recorded (with ``keep_raw=True``)."""
        return [
            _decode_any(e.raw) if isinstance(e.raw, bytes) else e.raw
            for e in self._entries.values()
        ]

    @property
    def resumable(self) -> bool:
        """Gemini's ``hasResumableContent``: a real prompt or a model message with substance."""
        return any(entry.resumable for entry in self._entries.values())

    def feed(self, line: bytes, lineno: int) -> None:
        if not line.strip():
            return
        # Fast path: the recorder writes message records with "id" first.
        if line.startswith(_MESSAGE_START) and _REWIND_KEY not in line:
            try:
                self._upsert_line(line)
                return
            except (msgspec.ValidationError, msgspec.DecodeError):
                pass  # the general path below says what is wrong with it
        try:
            record = _decode_any(line)
        except msgspec.DecodeError as exc:
            self.problems.append(Problem(line=lineno, message=f"not JSON ({exc})"))
            return
        if not isinstance(record, dict):
            self.problems.append(Problem(line=lineno, message="not a JSON object"))
        elif isinstance(record.get("$rewindTo"), str):
            self._rewind(record["$rewindTo"])
        elif isinstance(record.get("id"), str):
            self._upsert(record)
        elif isinstance(record.get("$set"), dict):
            update = record["$set"]
            if isinstance(update.get("messages"), list):
                self._replace(update["messages"])
            self.metadata.update(update)
        elif isinstance(record.get("sessionId"), str) and isinstance(
            record.get("projectHash"), str
        ):
            self.metadata.update(record)
            for message in record.get("messages") or ():
                if isinstance(message, dict) and isinstance(message.get("id"), str):
                    self._upsert(message)
        else:
            keys = ", ".join(sorted(map(str, record))[:5]) or "none"
            self.problems.append(Problem(line=lineno, message=f"unknown record (keys: {keys})"))

    def _upsert_line(self, line: bytes) -> None:
        if self.summary:
            peek = _decode_peek(line)
            resumable = is_resumable(peek.type, peek.content, peek.toolCalls, peek.thoughts)
            self._entries[peek.id] = _Entry(_summary(peek), resumable)
        else:
            message = _decode_message(line)
            entry = self._entries[message.id] = _Entry(message, _resumable(message))
            if self.keep_raw:
                entry.raw = line

    def _entry(self, record: dict[str, Any]) -> _Entry:
        resumable = is_resumable(
            record.get("type"),
            record.get("content"),
            record.get("toolCalls"),
            record.get("thoughts"),
        )
        if self.summary:
            peek = _Peek(
                id=record["id"],
                type=record.get("type"),
                content=record.get("content"),
            )
            return _Entry(_summary(peek), resumable)
        try:
            message: SessionMessage = msgspec.convert(record, MessageRecord)
        except msgspec.ValidationError as exc:
            kind = record.get("type")
            message = RawMessage(
                id=record["id"],
                type=kind if isinstance(kind, str) else None,
                raw=msgspec.json.encode(record).decode(),
                reason=f"unexpected shape: {exc}",
            )
        entry = _Entry(message, resumable)
        if self.keep_raw:
            entry.raw = record
        return entry

    def _upsert(self, record: dict[str, Any]) -> None:
        self._entries[record["id"]] = self._entry(record)

    def _replace(self, messages: list[Any]) -> None:
        self._shelved.update(self._entries)
        self._entries = {}
        for record in messages:
            if not (isinstance(record, dict) and isinstance(record.get("id"), str)):
                continue
            entry = self._entry(record)
            previous = self._shelved.get(record["id"])
            if previous is not None and previous.message.type == record.get("type"):
                entry.message, entry.raw = previous.message, previous.raw
            self._entries[record["id"]] = entry

    def _rewind(self, message_id: str) -> None:
        ids = list(self._entries)
        cut = ids.index(message_id) if message_id in self._entries else 0
        for gone in ids[cut:]:
            del self._entries[gone]


def _resumable(message: MessageRecord) -> bool:
    return is_resumable(message.type, message.content, message.toolCalls, message.thoughts)


def legacy_record(
    data: bytes, *, summary: bool, keep_raw: bool = False
) -> tuple[RecordReplay | None, str | None]:
    """A whole single-JSON session file (``parseLegacyRecordFallback``), as a replay.

    Returns ``(None, why)`` when it is not a session document.
    """
    try:
        document = _decode_any(data)
    except msgspec.DecodeError as exc:
        return None, "empty file" if not data.strip() else f"not JSON ({exc})"
    if not (isinstance(document, dict) and "sessionId" in document):
        return None, "not a Gemini session (no sessionId)"
    replay = RecordReplay(summary=summary, keep_raw=keep_raw)
    metadata = {k: v for k, v in document.items() if k != "messages"}
    replay.metadata.update(metadata)
    # Gemini does not require projectHash here; neither do we.
    replay.metadata.setdefault("projectHash", "")
    messages = document.get("messages")
    for message in messages if isinstance(messages, list) else ():
        if isinstance(message, dict) and isinstance(message.get("id"), str):
            replay._upsert(message)
    return replay, None
