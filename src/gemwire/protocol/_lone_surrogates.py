r"""JSON text holding half of a UTF-16 surrogate pair, read as Node meant it.

Node's ``JSON.stringify`` writes a string's lone surrogate as an escape (``"\ud83d"``):
Gemini CLI does so where it cuts a long tool output in the middle of an emoji, and writes
that into stream-json, its session files and ACP frames. Such text is valid JSON, but no
Unicode, and msgspec refuses it: the whole line would be lost. Node itself turns the lone
half into U+FFFD wherever the text becomes UTF-8, so that is what gemwire makes of it.

Decoders keep their fast path: only a decode that raised calls `repaired`, which rewrites
the lone escapes to ``\ufffd`` in the raw bytes; the decoder tries again and says so (a
`LoneSurrogates` record, or a session file's `Problem`).

    >>> data, count = repaired(rb'["cut \ud83d", "\ud83d\ude00", "\\ud83d"]')
    >>> count, msgspec.json.decode(data) == ["cut \ufffd", "\U0001f600", "\\ud83d"]
    (1, True)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

import msgspec

from gemwire.protocol._undecodable import UNDECODABLE

__all__ = ("LoneSurrogates", "decode_repaired", "repaired")

T = TypeVar("T")


class LoneSurrogates(msgspec.Struct, frozen=True, kw_only=True):
    """The next item's JSON held ``count`` lone UTF-16 surrogates; each is now U+FFFD."""

    count: int

    @property
    def message(self) -> str:
        """What gemwire says of it (a ``notice``, a session file's `Problem`)."""
        return (
            f"replaced {self.count} lone UTF-16 surrogate(s) in the agent's output with U+FFFD"
            " (half of a character, e.g. an emoji cut in two)"
        )


# An escape is one only after an even run of backslashes (``\\ud83d`` is the text "\ud83d"),
# so a match starts where a run of backslashes starts. A high surrogate escape followed at
# once by a low one is a pair, one character, and stays.
_SURROGATE_ESCAPE = re.compile(
    rb"(?<!\\)((?:\\\\)*)\\u("
    rb"[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    rb"|[dD][89a-fA-F][0-9a-fA-F]{2})"
)
_REPLACEMENT = rb"\ufffd"
_PAIR = len(b"d83d\\ude00")


def repaired(data: bytes) -> tuple[bytes, int] | None:
    """``data``, JSON text, with every escaped lone surrogate replaced by ``\\ufffd``, and
    how many there were; ``None`` when there are none (something else is wrong with it)."""
    if b"\\u" not in data:
        return None
    count = 0

    def replace(match: re.Match[bytes]) -> bytes:
        nonlocal count
        if len(match[2]) == _PAIR:
            return match[0]
        count += 1
        return match[1] + _REPLACEMENT

    text = _SURROGATE_ESCAPE.sub(replace, data)
    return (text, count) if count else None


def decode_repaired(decode: Callable[[bytes], T], data: bytes) -> tuple[T, LoneSurrogates] | None:
    """After ``decode(data)`` raised: what it decodes to once its lone surrogates are
    replaced, and how many there were; ``None`` when that does not make it decode."""
    fixed = repaired(data)
    if fixed is None:
        return None
    try:
        return decode(fixed[0]), LoneSurrogates(count=fixed[1])
    except UNDECODABLE:
        return None
