"""The two output formats a Gemini run can read: decoder and reducer, composed.

The runner feeds each the child's stdout chunks and stderr lines, and asks it to finish
once the child has exited; both end in exactly one ``turn_completed``. A budget
(`RunBudget`) is checked on each event as it is made: the events end at the one that
spent it, and the normalizer never sees what the CLI wrote after it (on a loaded machine the
CLI can write a further tool call before gemwire reads the one that spent the budget).
"""

from __future__ import annotations

from typing import Protocol

from gemwire._normalize.gemini import GeminiNormalizer
from gemwire._normalize.gemini_json import GeminiJsonNormalizer
from gemwire.events import Event, TurnError
from gemwire.protocol.gemini import GeminiStreamDecoder
from gemwire.protocol.gemini_json import ErrorDocumentScanner, JsonOutputDecoder
from gemwire.runners._gemini_budget import RunBudget
from gemwire.runners.gemini_options import GeminiOptions

__all__ = ("JsonReader", "OutputReader", "StreamJsonReader", "output_reader")


class OutputReader(Protocol):
    @property
    def session_id(self) -> str | None: ...

    def feed(self, data: bytes) -> tuple[list[Event], str | None]:
        """The events of ``data`` up to the one that spent the budget, and why it did."""
        ...

    def stderr_line(self, line: str) -> list[Event]: ...

    def finish(self, *, exit_code: int | None, stopped: TurnError | None) -> list[Event]: ...


class StreamJsonReader:
    """``--output-format stream-json``: events as they happen."""

    def __init__(self, budget: RunBudget, *, cwd: str, max_line_bytes: int) -> None:
        self._decoder = GeminiStreamDecoder(max_line_bytes=max_line_bytes)
        self._normalizer = GeminiNormalizer(cwd=cwd)
        self._budget = budget
        self._spent = False

    @property
    def session_id(self) -> str | None:
        return self._normalizer.session_id

    def feed(self, data: bytes) -> tuple[list[Event], str | None]:
        items = self._decoder.feed(data)
        out: list[Event] = []
        # One item at a time only where an event can spend the budget (the batch is faster).
        for batch in ([item] for item in items) if self._budget.counts_events else (items,):
            for event in self._normalizer.feed_all(batch):
                out.append(event)
                if (why := self._budget.spent_by(event)) is not None:
                    self._spent = True
                    return out, why
        return out, None

    def stderr_line(self, line: str) -> list[Event]:
        return []

    def finish(self, *, exit_code: int | None, stopped: TurnError | None) -> list[Event]:
        rest = [] if self._spent else self._normalizer.feed_all(self._decoder.close())
        return rest + self._normalizer.finish(exit_code=exit_code, stopped=stopped)


class JsonReader:
    """``--output-format json``: one document at the end (fatal errors: on stderr)."""

    def __init__(self, *, max_line_bytes: int) -> None:
        self._decoder = JsonOutputDecoder(max_bytes=max_line_bytes)
        self._scanner = ErrorDocumentScanner()
        self._normalizer = GeminiJsonNormalizer()

    @property
    def session_id(self) -> str | None:
        return self._normalizer.session_id

    def feed(self, data: bytes) -> tuple[list[Event], str | None]:
        self._decoder.feed(data)  # no events before the end: no budget (gemini_checks)
        return [], None

    def stderr_line(self, line: str) -> list[Event]:
        document = self._scanner.feed_line(line)
        return self._normalizer.error_document(document) if document is not None else []

    def finish(self, *, exit_code: int | None, stopped: TurnError | None) -> list[Event]:
        return self._normalizer.finish(self._decoder.close(), exit_code=exit_code, stopped=stopped)


def output_reader(options: GeminiOptions, budget: RunBudget, *, cwd: str) -> OutputReader:
    if options.output_format == "json":
        return JsonReader(max_line_bytes=options.max_line_bytes)
    return StreamJsonReader(budget, cwd=cwd, max_line_bytes=options.max_line_bytes)
