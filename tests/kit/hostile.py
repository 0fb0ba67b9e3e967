"""Hostile input for fuzz tests: real recordings, mutated (hypothesis strategies).

Reusable by every decoder's fuzz test (Gemini stream-json, json output, session files, ACP
frames): draw a recording with `recording`, mutate it with `mutated`, feed it in chunks
split anywhere (`chunks`), and check the time it took with `within`. Mutations are those a
real deployment meets or an attacker writes: bytes inserted, deleted or cut off, lines
duplicated, JSON values nested 3,000 deep (and just around the interpreter's recursion
limit), invalid UTF-8, terminal escape sequences.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from hypothesis import strategies as st

__all__ = (
    "CHARACTERS",
    "CUT_TEXT",
    "DEPTHS",
    "INVALID_UTF8",
    "chunks",
    "cut_text",
    "mutated",
    "recording",
    "texts",
    "within",
)

DEPTHS = (500, 950, 990, 1000, 3000)
"""Nesting depths: fine, around the recursion limit (1000), far beyond it."""
INVALID_UTF8 = (b"\xff", b"\xe9", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80")
ESCAPES = (b"\x1b[2J", b"\x1b]0;owned\x07", b"\\u001b[2J", b"\\ud800", b"\xe2\x80\xae", b"\r")
CHARACTERS = (
    "aZ09 _-.\"'\\/{}[]:,=#$`~\n\r\t\x00\x08\x1b\x7f\x85\x9b"
    "\u00e9\u00a0\u0301\u200b\u200e\u202e\u2028\u2029\ufeff\u20ac\uffff\U0001f600\U0010ffff"
)
"""One character of each kind that breaks parsers and terminals: letters, digits, the
punctuation of JSON, TOML and Markdown, line ends, NUL, backspace, ESC, DEL, C1 controls,
2-, 3- and 4-byte UTF-8, a combining mark, zero-width, bidi and line-separator characters,
a BOM and noncharacters."""
_VALUE_START = re.compile(rb'":\s?')
_STRING_START = re.compile(rb'":\s?"')
CUT_TEXT = (b"\\ud83d", b"\\udc00", b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"\x80")
"""What Node writes where it cuts a text inside a character (half of a surrogate pair, as a
JSON escape), and bytes that are not UTF-8: inside a string, the JSON stays valid."""
_OPERATIONS = ("deep", "utf8", "escape", "insert", "delete", "truncate", "duplicate", "newline")


def texts(
    alphabet: str = CHARACTERS, *, min_size: int = 0, max_size: int | None = None
) -> st.SearchStrategy[str]:
    """Text of ``alphabet``'s characters. Not `st.text`: with any alphabet it first indexes
    all of Unicode, a second of CPU on every fresh checkout (many on a loaded machine)."""
    return st.lists(st.sampled_from(alphabet), min_size=min_size, max_size=max_size).map("".join)


def recording(paths: Sequence[Path]) -> st.SearchStrategy[bytes]:
    """The bytes of one of ``paths``."""
    return st.sampled_from(sorted(paths)).map(Path.read_bytes)


@st.composite
def mutated(draw: st.DrawFn, data: bytes, max_mutations: int = 4) -> bytes:
    """``data`` with one to ``max_mutations`` hostile changes."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, max_mutations))):
        operation = draw(st.sampled_from(_OPERATIONS))
        at = draw(st.integers(0, len(out)))
        if operation == "deep":
            # Before a value: `"key":[[[...]]],"_":value` is still valid JSON.
            starts = [m.end() for m in _VALUE_START.finditer(out)]
            at = draw(st.sampled_from(starts)) if starts else at
            depth = draw(st.sampled_from(DEPTHS))
            out[at:at] = b"[" * depth + b"]" * depth + b',"_":'
        elif operation == "utf8":
            out[at:at] = draw(st.sampled_from(INVALID_UTF8))
        elif operation == "escape":
            out[at:at] = draw(st.sampled_from(ESCAPES))
        elif operation == "insert":
            out[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif operation == "delete":
            del out[at : at + draw(st.integers(1, 64))]
        elif operation == "truncate":
            del out[at:]
        elif operation == "duplicate":
            lines = bytes(out).split(b"\n")
            line = draw(st.sampled_from(lines))
            lines.insert(draw(st.integers(0, len(lines))), line)
            out = bytearray(b"\n".join(lines))
        else:
            out[at:at] = draw(st.sampled_from((b"\n", b"\r\n", b"\n\n")))
    return bytes(out)


@st.composite
def cut_text(draw: st.DrawFn, data: bytes, max_cuts: int = 3) -> bytes:
    """``data``, JSON lines, with one to ``max_cuts`` strings holding `CUT_TEXT` at their
    start: every line is still a JSON document of the same shape, but not all Unicode."""
    out = bytearray(data)
    starts = [m.end() for m in _STRING_START.finditer(out)]
    if not starts:
        return data
    for at in sorted(
        draw(st.sets(st.sampled_from(starts), min_size=1, max_size=max_cuts)), reverse=True
    ):
        out[at:at] = draw(st.sampled_from(CUT_TEXT))
    return bytes(out)


def chunks(data: bytes, size: int) -> Iterator[bytes]:
    """``data`` in pieces of ``size`` bytes (a pipe splits anywhere)."""
    for start in range(0, len(data), size):
        yield data[start : start + size]


@contextmanager
def within(seconds: float) -> Iterator[None]:
    """Fail if the block took longer than ``seconds`` (generous: the machine is shared)."""
    started = time.monotonic()
    yield
    elapsed = time.monotonic() - started
    assert elapsed < seconds, f"took {elapsed:.1f} s"
