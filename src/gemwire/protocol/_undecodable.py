"""What decoding an untrusted JSON document can raise, and how to say it in a record.

msgspec reports broken JSON and a wrong shape as `msgspec.DecodeError`, but invalid UTF-8
inside a string as `UnicodeDecodeError`, and nesting deeper than the interpreter's recursion
limit (a model's tool arguments 3,000 deep pass through Gemini CLI fine) as `RecursionError`.
Every decoder of agent output or saved files catches all three, so none of them escapes as a
crash; each becomes a malformed record saying which it was.
"""

from __future__ import annotations

import msgspec

__all__ = ("UNDECODABLE", "decode_replacing", "why_undecodable")

UNDECODABLE = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)

_REPLACEMENT = "\ufffd"


def why_undecodable(exc: Exception) -> str:
    """A short reason for a record, from one of the `UNDECODABLE` errors."""
    if isinstance(exc, RecursionError):
        return "nested too deeply to decode"
    if isinstance(exc, UnicodeDecodeError):
        return f"invalid UTF-8 in a JSON string ({exc.reason})"
    return str(exc)


def decode_replacing(data: bytes) -> tuple[str, int]:
    """``data`` as text with invalid UTF-8 replaced by U+FFFD, as Node reads it, and how
    many replacement characters that added (ones already in ``data`` do not count)."""
    text = data.decode(errors="replace")
    return text, text.count(_REPLACEMENT) - data.count(_REPLACEMENT.encode())
