"""The two output formats a Gemini run can read: decoder and reducer, composed.

The runner feeds each the child's stdout chunks and stderr lines, and asks it to finish
once the child has exited; both end in exactly one ``turn_completed``.
"""

from __future__ import annotations

from typing import Protocol

from gemwire._normalize.gemini import GeminiNormalizer
from gemwire._normalize.gemini_json import GeminiJsonNormalizer
from gemwire.events import Event, TurnError
from gemwire.protocol.gemini import GeminiStreamDecoder
from gemwire.protocol.gemini_json import ErrorDocumentScanner, JsonOutputDecoder
from gemwire.runners.gemini_options import OutputFormat

__all__ = ("JsonReader", "OutputReader", "StreamJsonReader", "output_reader")


class OutputReader(Protocol):
    @property
    def session_id(self) -> str | None: ...

    def feed(self, data: bytes) -> list[Event]: ...

    def stderr_line(self, line: str) -> list[Event]: ...

    def finish(self, *, exit_code: int | None, stopped: TurnError | None) -> list[Event]: ...


class StreamJsonReader:
    """``--output-format stream-json``: events as they happen."""

    def __init__(self, *, cwd: str, max_line_bytes: int) -> None:
        self._decoder = GeminiStreamDecoder(max_line_bytes=max_line_bytes)
        self._normalizer = GeminiNormalizer(cwd=cwd)

    @property
    def session_id(self) -> str | None:
        return self._normalizer.session_id

    def feed(self, data: bytes) -> list[Event]:
        return self._normalizer.feed_all(self._decoder.feed(data))

    def stderr_line(self, line: str) -> list[Event]:
        return []

    def finish(self, *, exit_code: int | None, stopped: TurnError | None) -> list[Event]:
        events = self._normalizer.feed_all(self._decoder.close())
        return events + self._normalizer.finish(exit_code=exit_code, stopped=stopped)


class JsonReader:
    """``--output-format json``: one document at the end (fatal errors: on stderr)."""

    def __init__(self, *, max_line_bytes: int) -> None:
        self._decoder = JsonOutputDecoder(max_bytes=max_line_bytes)
        self._scanner = ErrorDocumentScanner()
        self._normalizer = GeminiJsonNormalizer()

    @property
    def session_id(self) -> str | None:
        return self._normalizer.session_id

    def feed(self, data: bytes) -> list[Event]:
        self._decoder.feed(data)
        return []

    def stderr_line(self, line: str) -> list[Event]:
        document = self._scanner.feed_line(line)
        return self._normalizer.error_document(document) if document is not None else []

    def finish(self, *, exit_code: int | None, stopped: TurnError | None) -> list[Event]:
        return self._normalizer.finish(self._decoder.close(), exit_code=exit_code, stopped=stopped)


def output_reader(output_format: OutputFormat, *, cwd: str, max_line_bytes: int) -> OutputReader:
    if output_format == "json":
        return JsonReader(max_line_bytes=max_line_bytes)
    return StreamJsonReader(cwd=cwd, max_line_bytes=max_line_bytes)
