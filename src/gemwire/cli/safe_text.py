"""Text from an agent, a stream or a file, made safe to show on a terminal.

Everything gemwire shows a person comes from somewhere it does not control: assistant text,
tool output, non-JSON lines, notices, titles, file names. Printed raw, an escape sequence in it
can clear the screen, retitle the terminal or rewrite what was shown before, and a bidi
override can make text read differently from what it is. This is the one place that decides
what reaches the terminal; every human-facing output (the live view, the plain transcript,
``--quiet``, ``sessions``) goes through it. ``--json`` never does: it is exact, and JSON
escapes control characters itself.

- complete escape sequences (CSI: colours, cursor movement, clearing; OSC, DCS, APC, PM and
  SOS strings: titles, hyperlinks; two-byte ``ESC x``) are removed: a tool's coloured output
  reads as plain text;
- any other control character (C0 but newline and tab, DEL, C1, a lone ``ESC``) and the bidi
  embedding, override and isolate controls are shown as visible escapes (``\\x1b``,
  ``\\u202e``); a CRLF line end is a newline;
- a lone surrogate (a file name that is not UTF-8) becomes U+FFFD, so printing cannot fail.

>>> terminal_safe("\\x1b]0;owned\\x07\\x1b[2J\\x1b[31mred\\x1b[0m\\r\\nnext\\x07")
'red\\nnext\\\\x07'
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

import msgspec

__all__ = ("terminal_safe", "terminal_safe_event", "terminal_safe_json")

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# What JSON text may hold raw (only ever inside a string) that a terminal would act on.
_RAW_IN_JSON = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_SEQUENCE = re.compile(
    "\x1b\\[[0-?]*[ -/]*[@-~]"  # CSI
    "|\x1b[\\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\\\|\x9c)"  # OSC, DCS, SOS, PM, APC strings
    "|\x1b[ -/]*[0-~]"  # other escape sequences
)

S = TypeVar("S", bound=msgspec.Struct)


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """``text`` with nothing a terminal would act on; the same object when it is clean."""
    if _UNSAFE.search(text) is None:
        return text
    text = _SEQUENCE.sub("", text.replace("\r\n", "\n"))
    return _UNSAFE.sub(_visible, text)


def terminal_safe_json(text: str) -> str:
    """JSON text (as msgspec writes it: C0 controls already escaped) with every character a
    terminal would act on escaped as ``\\uXXXX``: the same JSON value, safe to show.

    >>> terminal_safe_json('{"text":"red' + chr(0x9B) + '2J"}')
    '{"text":"red\\\\u009b2J"}'
    """
    return _RAW_IN_JSON.sub(_json_escape, text)


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def terminal_safe_event(event: S) -> S:
    """An event (or any Struct) with every text field made `terminal_safe`.

    Nested Structs and lists of them are cleaned too. Free-form payloads (a tool call's
    ``input``, ``data``) are left alone: no view shows them as they are.
    """
    changes = {}
    for name in event.__struct_fields__:
        value = getattr(event, name)
        cleaned = _clean(value)
        if cleaned is not value:
            changes[name] = cleaned
    return msgspec.structs.replace(event, **changes) if changes else event


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return terminal_safe(value)
    if isinstance(value, msgspec.Struct):
        return terminal_safe_event(value)
    if isinstance(value, list):
        cleaned = [_clean(item) for item in value]
        return value if all(a is b for a, b in zip(cleaned, value, strict=True)) else cleaned
    return value
