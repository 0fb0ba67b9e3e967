"""`JsonlRecords`: the lines of a session file that is one JSON record a line (Claude Code's,
Qwen Code's, Codex's), decoded one at a time into the agent's record type.

Sans-IO: the caller feeds blocks of whole lines (and the last, unterminated one). A line that
is not a record (cut short while the agent was writing it, not JSON, not an object, a field
of the wrong type) is a `Problem` on its line, never an exception; a record of a type
gemwire does not know is kept (the normalizer decides). The record types are in
`gemwire.wire.<agent>_session`.

Text the agent wrote that is not Unicode is read as Node reads it back, as Gemini's session
files are (`gemwire.protocol.gemini_session`): invalid UTF-8 as U+FFFD, and half of a
UTF-16 surrogate pair (``"\\ud83d"``: Node writes half an emoji so where it cuts a text) as
U+FFFD too; the line is kept, with a `Problem` that says so. Either would otherwise lose
the whole line, and with a prompt's line, the session.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

import msgspec

from gemwire.protocol._lone_surrogates import decode_repaired
from gemwire.protocol._undecodable import UNDECODABLE, decode_replacing, why_undecodable
from gemwire.protocol.gemini_session import Problem

__all__ = ("JsonlRecords", "LineDecoder")


R = TypeVar("R")


class LineDecoder(Generic[R]):
    """One line at a time into ``record``: the record, or ``None`` and the `Problem` why
    (``not a <what>: …``), each repair said as a `Problem` too (`problems`, appended to).
    OpenCode's rows are decoded so too, a row's ``data`` a line.

    >>> from gemwire.wire.claude_session import Record
    >>> decoder = LineDecoder(Record, [])
    >>> decoder.decode(b'{"type":"user","sessionId":"s\\\\ud83d"}', 3).sessionId
    's\\ufffd'
    >>> [(p.line, p.message[:38]) for p in decoder.problems]
    [(3, 'replaced 1 lone UTF-16 surrogate(s) in')]
    """

    __slots__ = ("_decode", "_what", "problems")

    def __init__(self, record: type[R], problems: list[Problem], what: str = "record") -> None:
        self._decode: Callable[[bytes], R] = msgspec.json.Decoder(record).decode
        self._what = what
        self.problems = problems

    def decode(self, line: bytes, number: int) -> R | None:
        """``line`` (line ``number``) as a record, else ``None`` (a `Problem` says why)."""
        try:
            return self._decode(line)
        except UNDECODABLE as exc:
            return self._repaired(line, number, exc)

    def checked(self, line: bytes, number: int) -> bytes:
        """``line`` with its invalid UTF-8 replaced (a `Problem` says so): a typed decode
        does not look inside the fields it skips or keeps raw."""
        if line.isascii():
            return line
        try:
            line.decode()
        except UnicodeDecodeError:
            text, count = decode_replacing(line)
            self.problems.append(Problem(line=number, message=_REPLACED.format(count)))
            return text.encode()
        return line

    def _repaired(self, line: bytes, number: int, error: Exception) -> R | None:
        if isinstance(error, UnicodeDecodeError):
            line = self.checked(line, number)
            try:
                return self._decode(line)
            except UNDECODABLE as exc:
                error = exc
        fixed = decode_repaired(self._decode, line)
        if fixed is not None:
            self.problems.append(Problem(line=number, message=fixed[1].message))
            return fixed[0]
        message = f"not a {self._what}: {why_undecodable(error)}"
        self.problems.append(Problem(line=number, message=message))
        return None


_REPLACED = "replaced {} invalid UTF-8 byte(s) with U+FFFD"


class JsonlRecords(Generic[R]):
    """The records of one session file, in order, and the lines skipped or repaired.

    >>> from gemwire.wire.claude_session import Record
    >>> records = JsonlRecords(Record)
    >>> records.feed_block(b'{"type":"user","sessionId":"s"}\\nnot json\\n', 1)
    2
    >>> [r.sessionId for r in records.records], [p.line for p in records.problems]
    (['s'], [2])
    """

    def __init__(self, record: type[R]) -> None:
        self.records: list[R] = []
        self.problems: list[Problem] = []
        self._decoder = LineDecoder(record, self.problems)

    def feed_block(self, block: bytes, first_line: int) -> int:
        """Decode every line of ``block`` (line ``first_line`` first); returns how many."""
        lines = block.split(b"\n")
        if lines and not lines[-1]:
            lines.pop()  # the newline that ends the block
        append, decode, checked = self.records.append, self._decoder.decode, None
        if not _is_utf8(block):  # rare: each line is checked (invalid bytes may be skipped)
            checked = self._decoder.checked
        for number, line in enumerate(lines, start=first_line):
            if not line.strip():
                continue
            record = decode(checked(line, number) if checked else line, number)
            if record is not None:
                append(record)
        return len(lines)


def _is_utf8(block: bytes) -> bool:
    if block.isascii():
        return True
    try:
        block.decode()
    except UnicodeDecodeError:
        return False
    return True
