"""`JsonlRecords`: the lines of a session file that is one JSON record a line (Claude Code's,
Qwen Code's), decoded one at a time into the agent's record type.

Sans-IO: the caller feeds blocks of whole lines (and the last, unterminated one). A line that
is not a record (cut short while the agent was writing it, not JSON, not an object, a field
of the wrong type) is a `Problem` on its line, never an exception; a record of a type
gemwire does not know is kept (the normalizer decides). The record types are in
`gemwire.wire.<agent>_session`.
"""

from __future__ import annotations

from typing import Generic, TypeVar

import msgspec

from gemwire.protocol._undecodable import UNDECODABLE
from gemwire.protocol.gemini_session import Problem

__all__ = ("JsonlRecords",)


R = TypeVar("R")


class JsonlRecords(Generic[R]):
    """The records of one session file, in order, and the lines skipped.

    >>> from gemwire.wire.claude_session import Record
    >>> records = JsonlRecords(Record)
    >>> records.feed_block(b'{"type":"user","sessionId":"s"}\\nnot json\\n', 1)
    2
    >>> [r.sessionId for r in records.records], [p.line for p in records.problems]
    (['s'], [2])
    """

    def __init__(self, record: type[R]) -> None:
        self._decode = msgspec.json.Decoder(record).decode
        self.records: list[R] = []
        self.problems: list[Problem] = []

    def feed_block(self, block: bytes, first_line: int) -> int:
        """Decode every line of ``block`` (line ``first_line`` first); returns how many."""
        lines = block.split(b"\n")
        if lines and not lines[-1]:
            lines.pop()  # the newline that ends the block
        append, decode = self.records.append, self._decode
        for number, line in enumerate(lines, start=first_line):
            if not line.strip():
                continue
            try:
                append(decode(line))
            except UNDECODABLE as exc:
                self.problems.append(Problem(line=number, message=f"not a record: {exc}"))
        return len(lines)
