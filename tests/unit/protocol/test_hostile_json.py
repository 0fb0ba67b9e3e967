"""JSON nested deeper than msgspec can decode, and invalid UTF-8 inside a string: every Gemini
decoder turns them into a malformed record (or raises its typed error in strict mode)."""

from __future__ import annotations

import pytest

from gemwire.errors import MalformedMessageError
from gemwire.protocol.gemini import GeminiStreamDecoder, MalformedLine
from gemwire.protocol.gemini_json import ErrorDocumentScanner, decode_json_output
from gemwire.wire.gemini_json import JsonOutput

DEEP = b"[" * 3000 + b"]" * 3000
TOOL_USE = (
    b'{"type":"tool_use","timestamp":"t","tool_name":"x","tool_id":"c1","parameters":{"a":'
    + DEEP
    + b"}}"
)
INIT = b'{"type":"init","timestamp":"t","session_id":"s","model":"auto"}'


@pytest.mark.parametrize(
    "line", [TOOL_USE, b'{"type":"zz","x":' + DEEP + b"}", DEEP], ids=["known", "unknown", "bare"]
)
def test_a_line_nested_3000_deep_is_malformed_and_the_stream_goes_on(line: bytes) -> None:
    items = GeminiStreamDecoder().feed(line + b"\n" + INIT + b"\n")
    assert items[0] == MalformedLine(
        type=None, line=line.decode(), reason="nested too deeply to decode"
    )
    assert items[1].__class__.__name__ == "InitEvent"
    assert len(items) == 2


def test_strict_mode_raises_its_typed_error_for_deep_nesting() -> None:
    with pytest.raises(MalformedMessageError, match="line 1: nested too deeply to decode"):
        GeminiStreamDecoder(strict=True).feed(TOOL_USE + b"\n")


def test_a_json_document_nested_3000_deep_is_malformed() -> None:
    data = b'{"session_id":"s","extra":' + DEEP + b"}"
    assert decode_json_output(data) == MalformedLine(
        type=None, line=data.decode(), reason="nested too deeply to decode"
    )
    with pytest.raises(MalformedMessageError, match="nested too deeply to decode"):
        decode_json_output(data, strict=True)


def test_invalid_utf8_inside_a_json_document_string_is_malformed() -> None:
    assert decode_json_output(b'{"response":"caf\xe9"}') == MalformedLine(
        type=None,
        line='{"response":"caf\ufffd"}',
        reason="invalid UTF-8 in a JSON string (unexpected end of data)",
    )


def test_a_deep_error_document_on_stderr_is_skipped() -> None:
    scanner = ErrorDocumentScanner()
    lines = ["{", '  "error": ' + DEEP.decode(), "}", "{", '  "session_id": "s2"', "}"]
    found = [scanner.feed_line(line) for line in lines]
    assert [d.session_id if isinstance(d, JsonOutput) else d for d in found] == [None] * 5 + ["s2"]


def test_strict_mode_checks_the_fields_the_typed_decode_skipped() -> None:
    line = INIT[:-1] + b',"\xff":1}'
    with pytest.raises(MalformedMessageError, match="line 1: invalid UTF-8 in a JSON string"):
        GeminiStreamDecoder(strict=True).feed(line + b"\n")
    with pytest.raises(MalformedMessageError, match="invalid UTF-8 in a JSON string"):
        decode_json_output(b'{"\xff":1}', strict=True)
