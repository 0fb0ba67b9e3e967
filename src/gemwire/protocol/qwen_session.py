"""`QwenRecords`: the lines of a Qwen Code session file, decoded one at a time.

Sans-IO: the caller feeds blocks of whole lines (and the last, unterminated one). A line that
is not a record (cut short while Qwen Code was writing it, not JSON, not an object, a
field of the wrong type) is a `Problem` on its line, never an exception; a record of a type
gemwire does not know is kept (the normalizer decides). See `gemwire.wire.qwen_session`.
"""

from __future__ import annotations

import msgspec

from gemwire.protocol._undecodable import UNDECODABLE
from gemwire.protocol.gemini_session import Problem
from gemwire.wire.qwen_session import Record

__all__ = ("QwenRecords",)

_decode = msgspec.json.Decoder(Record).decode


class QwenRecords:
    """The records of one session file, in order, and the lines skipped.

    >>> records = QwenRecords()
    >>> records.feed_block(b'{"type":"user","sessionId":"s"}\\nnot json\\n', 1)
    2
    >>> [r.type for r in records.records], [p.line for p in records.problems]
    (['user'], [2])
    """

    def __init__(self) -> None:
        self.records: list[Record] = []
        self.problems: list[Problem] = []

    def feed_block(self, block: bytes, first_line: int) -> int:
        """Decode every line of ``block`` (line ``first_line`` first); returns how many."""
        lines = block.split(b"\n")
        if lines and not lines[-1]:
            lines.pop()  # the newline that ends the block
        append = self.records.append
        for number, line in enumerate(lines, start=first_line):
            if not line.strip():
                continue
            try:
                append(_decode(line))
            except UNDECODABLE as exc:
                self.problems.append(Problem(line=number, message=f"not a record: {exc}"))
        return len(lines)

    @property
    def session_id(self) -> str | None:
        """The session id the records carry (the first that has one)."""
        return next((r.sessionId for r in self.records if isinstance(r.sessionId, str)), None)
