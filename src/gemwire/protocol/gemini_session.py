"""Replaying a session file's records to its final state, the way Gemini CLI loads it.

`RecordReplay` is sans-IO: it is fed the lines in order (``loadConversationRecord`` in
``chatRecordingService.ts``, 0.61.0) and keeps, in insertion order, the last version of every
message:

1. a header (``sessionId`` and ``projectHash`` strings, no ``id``) merges into the metadata;
   every start writes one, so later headers win (e.g. ``startTime`` after a resume);
2. ``{"$set": {...}}`` merges into the metadata; ``$set.messages`` replaces the message list;
3. a record with a string ``id`` is a message: upserted in place;
4. ``{"$rewindTo": id}`` drops that message and every later one (all of them if not found).

One deliberate difference: when ``$set.messages`` names a message that is already known by id
(a resume replays the whole history that way, docs/gemini-cli.md#resuming), the recorded
version is kept, because the replay drops its thoughts, tokens, tool calls and diffs. A
``$set.messages`` is Gemini's history in API form: after a cancel, 0.61.0 rolls its history
back and writes it so, one model turn a message, its calls as ``functionCall`` parts of the
turn's first message; the recorded message that held those calls (``toolCalls``, with their
results) is named no more. It is kept too, right after the message naming its calls (else
the calls, and what they did, are lost from the saved view). What Gemini itself would decide
(is the file resumable?) is computed from the replay, exactly.

Lines Gemini skips silently (not JSON, not an object, no known shape) are reported as
`Problem`s; so is text that was read as Gemini reads it (invalid UTF-8, lone surrogates:
U+FFFD), and the line is kept. In ``summary`` mode messages are only classified, not kept whole (listing).

Speed: fed a block of lines at a time (`RecordReplay.feed_block`), it decodes a line that
starts with ``{"id":`` (as the recorder writes messages) straight into a `MessageRecord`, or,
keeping lines (``lines=True``), only as far as its ``id``, keeping the line to be decoded when
it is read (`gemwire.protocol.gemini_messages`); anything else, or a line that does not fit,
takes the general path (`RecordReplay.feed_general`: any JSON, then a look at what it is),
which decides the same.
Whether the file is resumable is judged only when asked, stopping at the first message that
makes it so.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import msgspec

from gemwire.protocol._lone_surrogates import decode_repaired
from gemwire.protocol._undecodable import UNDECODABLE, decode_replacing, why_undecodable
from gemwire.protocol.gemini_content import is_ignored_user_content, is_resumable, text_of
from gemwire.protocol.gemini_messages import (
    Messages,
    converted,
    decode_message_id,
    message_of,
    record_verdict,
    verdict_of,
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


_decode_message = msgspec.json.Decoder(MessageRecord).decode
_decode_peek = msgspec.json.Decoder(_Peek).decode
_decode_any = msgspec.json.Decoder().decode
_MESSAGE_START = b'{"id":'
_REWIND_KEY = b'"$rewindTo"'


@functools.cache
def _decoder(message_type: type) -> Callable[[bytes], Any]:
    return (
        _decode_message
        if message_type is MessageRecord
        else msgspec.json.Decoder(message_type).decode
    )


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
    ``keep_raw=True`` also keeps each message as recorded (`originals`);
    ``message_type`` decodes messages into a smaller Struct that names only the fields a
    reader needs (`gemwire.sessions.usage`: tokens), which skips the rest unbuilt;
    ``lines=True`` keeps a message's line instead, checked but not decoded (`Messages`
    decodes it when it is read): about a third of the memory.
    """

    def __init__(
        self,
        *,
        summary: bool = False,
        keep_raw: bool = False,
        message_type: type = MessageRecord,
        lines: bool = False,
    ) -> None:
        self.summary = summary
        self.keep_raw = keep_raw
        self._lines = lines
        self._message_type = message_type
        self._decode = _decoder(message_type)
        self.metadata: dict[str, Any] = {}
        self.problems: list[Problem] = []
        # Upserts by id keep the first position: a dict in insertion order is the list.
        self._messages: dict[str, Any] = {}
        # Gemini's verdict on a message's latest version, where the kept message cannot
        # give it: a summary, a raw message, a recorded version a replay named.
        self._verdicts: dict[str, bool] = {}
        self._raw: dict[str, bytes | dict[str, Any]] = {}
        # Messages a ``$set.messages`` dropped: a later replay may name them again.
        self._shelved: dict[str, tuple[Any, bytes | dict[str, Any] | None]] = {}

    @property
    def is_session(self) -> bool:
        """Whether a header was seen (else Gemini reads the file as one legacy JSON document)."""
        return isinstance(self.metadata.get("sessionId"), str) and isinstance(
            self.metadata.get("projectHash"), str
        )

    @property
    def messages(self) -> Messages:
        return Messages(list(self._messages.values()))

    @property
    def originals(self) -> list[Any]:
        """The kept messages exactly as recorded (with ``keep_raw=True``)."""
        raws = (self._raw[message_id] for message_id in self._messages)
        return [_original(raw) if isinstance(raw, bytes) else raw for raw in raws]

    @property
    def resumable(self) -> bool:
        """Gemini's ``hasResumableContent``: a real prompt or a model message with substance."""
        verdicts = self._verdicts
        return any(
            verdicts[message_id] if message_id in verdicts else verdict_of(message)
            for message_id, message in self._messages.items()
        )

    def feed_block(self, block: bytes, first_lineno: int) -> tuple[int, bytes]:
        """`feed` the lines of ``block`` (the first is line ``first_lineno``).

        Returns how many lines were fed and what follows the last newline, not fed.
        """
        lines = block.split(b"\n")
        tail = lines.pop()
        # Each line gets its newline back on the general path: what is wrong reads the same.
        if self.summary or self.keep_raw:
            for lineno, line in enumerate(lines, first_lineno):
                self.feed(line + b"\n", lineno)
            return len(lines), tail
        # The common case, inlined: a message record, decoded straight into its type, or
        # kept as its line once it is known to decode (UTF-8 is checked a block at a time).
        lines_only = self._lines and _is_utf8(block)
        decode = decode_message_id if lines_only else self._decode
        messages, verdicts = self._messages, self._verdicts
        rewinds = _REWIND_KEY in block
        for lineno, line in enumerate(lines, first_lineno):
            if line.startswith(_MESSAGE_START) and not (rewinds and _REWIND_KEY in line):
                try:
                    message = decode(line)
                except UNDECODABLE:
                    pass  # the general path says what is wrong with it
                else:
                    messages[message.id] = line if lines_only else message
                    if verdicts:
                        verdicts.pop(message.id, None)
                    continue
            self.feed_general(line + b"\n", lineno)
        return len(lines), tail

    def feed(self, line: bytes, lineno: int, *, last: bool = False) -> None:
        """One line; ``last``: the file's last line, without its newline, where JSON that
        does not decode is a line the CLI is still writing."""
        # Fast path: the recorder writes message records with "id" first.
        if line.startswith(_MESSAGE_START) and _REWIND_KEY not in line:
            try:
                self._upsert_line(line)
                return
            except UNDECODABLE:
                pass  # the general path says what is wrong with it
        self.feed_general(line, lineno, last=last)

    def feed_general(self, line: bytes, lineno: int, *, last: bool = False) -> None:
        """`feed` without the fast path: decode any JSON, then look at what it is."""
        if not line.strip():
            return
        record, problems = _decode_record(line, lineno)
        if record is _UNDECODED and last:
            problems[-1] = Problem(line=lineno, message=_PARTIAL)
        self.problems.extend(problems)
        if record is _UNDECODED:
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
            self._messages[peek.id] = _summary(peek)
            self._verdicts[peek.id] = is_resumable(
                peek.type, peek.content, peek.toolCalls, peek.thoughts
            )
        else:
            message = self._decode(line)
            self._messages[message.id] = message
            self._verdicts.pop(message.id, None)
            if self.keep_raw:
                self._raw[message.id] = line

    def _entry(self, record: dict[str, Any]) -> tuple[Any, bool]:
        """The message to keep for ``record``, and Gemini's verdict on it."""
        resumable = record_verdict(record)
        if self.summary:
            peek = _Peek(
                id=record["id"],
                type=record.get("type"),
                content=record.get("content"),
            )
            return _summary(peek), resumable
        return converted(record, self._message_type), resumable

    def _keep(self, message_id: str, message: Any, resumable: bool, raw: Any) -> None:
        self._messages[message_id] = message
        self._verdicts[message_id] = resumable
        if self.keep_raw:
            self._raw[message_id] = raw

    def _upsert(self, record: dict[str, Any]) -> None:
        message, resumable = self._entry(record)
        self._keep(record["id"], message, resumable, record)

    def _replace(self, messages: list[Any]) -> None:
        # Cleared, not rebound: `feed_block` holds on to these dicts.
        self._shelved.update(
            (message_id, (message, self._raw.get(message_id)))
            for message_id, message in self._messages.items()
        )
        self._messages.clear()
        self._verdicts.clear()
        self._raw.clear()
        for record in messages:
            if not (isinstance(record, dict) and isinstance(record.get("id"), str)):
                continue
            message, resumable = self._entry(record)
            raw: Any = record
            previous = self._shelved.get(record["id"])
            if previous is not None and message_of(previous[0]).type == record.get("type"):
                message, raw = previous
            self._keep(record["id"], message, resumable, raw)
            if not self.summary and record.get("type") == "gemini":
                self._keep_calls_of(record.get("content"), messages)

    def _keep_calls_of(self, content: Any, named: list[Any]) -> None:
        """Keep the recorded messages whose ``toolCalls`` are the ``functionCall`` parts of a
        ``$set`` message's ``content``, unless the ``$set`` names them itself."""
        wanted = [
            call["id"]
            for part in (content if isinstance(content, list) else ())
            if isinstance(part, dict)
            and isinstance(call := part.get("functionCall"), dict)
            and isinstance(call.get("id"), str)
        ]
        if not wanted:
            return
        ids = {r["id"] for r in named if isinstance(r, dict) and isinstance(r.get("id"), str)}
        for message_id, (entry, raw) in self._shelved.items():
            if message_id in ids or message_id in self._messages:
                continue
            calls = _call_ids(entry)
            if calls and not calls.isdisjoint(wanted):
                self._keep(message_id, entry, verdict_of(entry), raw)

    def _rewind(self, message_id: str) -> None:
        messages = self._messages
        if message_id not in messages:
            messages.clear()  # cleared, not rebound: see _replace
            self._verdicts.clear()
            self._raw.clear()
            return
        # From the end back to the message: each message is dropped once, so a file of
        # many rewinds loads in linear time (listing every id per rewind was quadratic).
        gone = None
        while gone != message_id:
            gone, _ = messages.popitem()
            self._verdicts.pop(gone, None)
            self._raw.pop(gone, None)


_UNDECODED = object()
_PARTIAL = "partial last line skipped (the CLI may be writing it)"


def _decode_record(data: bytes, lineno: int) -> tuple[Any, list[Problem]]:
    """Any JSON value (`_UNDECODED` if none), and the problems found on the way.

    Invalid UTF-8 is replaced, as Gemini CLI reads the file (Node's ``utf8``), and lone
    surrogates too, as Node reads them back (`gemwire.protocol._lone_surrogates`); each is said.
    """
    problems: list[Problem] = []
    try:
        return _decode_any(data), problems
    except UnicodeDecodeError:
        text, count = decode_replacing(data)
        problems.append(Problem(line=lineno, message=f"replaced {count} invalid UTF-8 byte(s)"))
        data = text.encode()
        try:
            return _decode_any(data), problems
        except UNDECODABLE as exc:
            error: Exception = exc
    except UNDECODABLE as exc:
        error = exc
    fixed = decode_repaired(_decode_any, data)
    if fixed is not None:
        return fixed[0], [*problems, Problem(line=lineno, message=fixed[1].message)]
    return _UNDECODED, [*problems, Problem(line=lineno, message=_not_json(error))]


class _CallId(msgspec.Struct, frozen=True, gc=False):
    id: Any = None


class _Calls(msgspec.Struct, frozen=True, gc=False):
    """A message line decoded only as far as its calls' ids."""

    toolCalls: list[_CallId] | None = None


_decode_calls = msgspec.json.Decoder(_Calls).decode


def _call_ids(entry: Any) -> set[str]:
    """The ids of a kept message's recorded ``toolCalls`` (a line, or a `MessageRecord`)."""
    if isinstance(entry, bytes):
        try:
            calls: Any = _decode_calls(entry).toolCalls
        except UNDECODABLE:
            return set()
    else:
        calls = getattr(entry, "toolCalls", None)
    if not isinstance(calls, list):
        return set()
    return {call.id for call in calls if isinstance(call.id, str)}


def _original(raw: bytes) -> Any:
    """A kept line, decoded whole: the typed decode skipped its unknown fields unread, and
    one of them may hold invalid UTF-8 (replaced, as everywhere in a session file)."""
    try:
        return _decode_any(raw)
    except UnicodeDecodeError:
        return _decode_any(decode_replacing(raw)[0])


def _not_json(exc: Exception) -> str:
    return f"not JSON ({why_undecodable(exc)})"


def _is_utf8(block: bytes) -> bool:
    if block.isascii():
        return True
    try:
        block.decode()
    except UnicodeDecodeError:
        return False
    return True


def legacy_record(
    data: bytes, *, summary: bool, keep_raw: bool = False, message_type: type = MessageRecord
) -> tuple[RecordReplay | None, str | None]:
    """A whole single-JSON session file (``parseLegacyRecordFallback``), as a replay.

    Returns ``(None, why)`` when it is not a session document.
    """
    if not data.strip():
        return None, "empty file"
    document, problems = _decode_record(data, 0)
    if document is _UNDECODED:
        return None, problems[-1].message
    if not (isinstance(document, dict) and "sessionId" in document):
        return None, "not a Gemini session (no sessionId)"
    replay = RecordReplay(summary=summary, keep_raw=keep_raw, message_type=message_type)
    replay.problems.extend(problems)
    metadata = {k: v for k, v in document.items() if k != "messages"}
    replay.metadata.update(metadata)
    # Gemini does not require projectHash here; neither do we.
    replay.metadata.setdefault("projectHash", "")
    messages = document.get("messages")
    for message in messages if isinstance(messages, list) else ():
        if isinstance(message, dict) and isinstance(message.get("id"), str):
            replay._upsert(message)
    return replay, None
