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

import codecs
import re
from collections.abc import Callable
from typing import Generic, TypeVar

import msgspec

from gemwire.protocol._lone_surrogates import decode_repaired
from gemwire.protocol._undecodable import UNDECODABLE, decode_replacing, why_undecodable
from gemwire.protocol.gemini_session import Problem

__all__ = ("JsonlRecords", "LineDecoder", "lines_in")


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
        self._decode: Callable[[bytes | memoryview], R] = msgspec.json.Decoder(record).decode
        self._what = what
        self.problems = problems

    def decode(self, line: bytes | memoryview, number: int) -> R | None:
        """``line`` (line ``number``) as a record, else ``None`` (a `Problem` says why)."""
        try:
            return self._decode(line)
        except UNDECODABLE as exc:
            return self._repaired(bytes(line), number, exc)

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
    """The lines of one session file as records, and the lines skipped or repaired.

    >>> from gemwire.wire.claude_session import Record
    >>> lines = JsonlRecords(Record)
    >>> records = lines.decoded(b'{"type":"user","sessionId":"s"}\\nnot json\\n', 1)
    >>> [r.sessionId for r in records], [p.line for p in lines.problems]
    (['s'], [2])
    """

    def __init__(self, record: type[R]) -> None:
        self.problems: list[Problem] = []
        self._decoder = LineDecoder(record, self.problems)

    def decoded(self, block: bytes | bytearray, first_line: int) -> list[R]:
        """The records of ``block``'s lines (line ``first_line`` first; the last may lack
        its newline); a line that is not one is a `Problem`.

        Each line is decoded where it lies in ``block`` (a record's `msgspec.Raw` fields
        point into it): a line of hundreds of MB is not copied.
        """
        decode, view = self._decoder.decode, memoryview(block)
        records: list[R] = []
        append = records.append
        checked = None
        if not _is_utf8(block, view):  # rare: each line is checked, skipped fields too
            checked = self._decoder.checked
        start, number, size = 0, first_line, len(block)
        while start < size:
            stop = block.find(b"\n", start)
            stop = size if stop < 0 else stop
            if stop > start and not _BLANK.fullmatch(block, start, stop):
                line = view[start:stop]
                record = decode(checked(bytes(line), number) if checked else line, number)
                if record is not None:
                    append(record)
            start, number = stop + 1, number + 1
        return records


_BLANK = re.compile(rb"\s*")


def lines_in(block: bytes | bytearray) -> int:
    """How many lines ``block`` holds (the last may lack its newline)."""
    return block.count(b"\n") + (0 if not block or block.endswith(b"\n") else 1)


_CHECKED = 1 << 20


def _is_utf8(block: bytes | bytearray, view: memoryview) -> bool:
    """Whether ``block`` is UTF-8, checked a MiB at a time (a long line's text is not
    built whole to know)."""
    if block.isascii():
        return True
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for start in range(0, len(view), _CHECKED):
            decoder.decode(view[start : start + _CHECKED])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True
