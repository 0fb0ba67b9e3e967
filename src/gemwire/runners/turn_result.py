"""How a turn ended, one shape for both runners, and what a running turn keeps for it.

`TurnResult` is the base of the Gemini runner's `RunResult` and the ACP client's
`AcpTurnResult`: the fields both have, and one ``raise_for_error``; both are built from
events the runner has masked (docs/security.md). `TurnRecord` is what a turn keeps while it
runs — the files it changed and its notices (capped), never every event — so a turn of two
million chunks costs no more memory than a turn of ten.
"""

from __future__ import annotations

from collections import deque

import msgspec

from gemwire.errors import RUN_FAILURES, RunFailed
from gemwire.events import Event, FileChanged, Notice, TokenUsage, TurnError

__all__ = ("MAX_KEPT_NOTICES", "TurnRecord", "TurnResult")

MAX_KEPT_NOTICES = 1000
"""Notices a result keeps (the last ones); the events themselves all go to the iterator."""


class TurnResult(msgspec.Struct, frozen=True, kw_only=True):
    """How a turn ended. The partial answer, the session id and usage survive every failure."""

    ok: bool
    answer: str
    error: TurnError | None
    stop_reason: str
    files_changed: list[FileChanged]
    usage: TokenUsage | None
    session_id: str | None
    duration_s: float
    notices: list[Notice]
    """The turn's notices (the last `MAX_KEPT_NOTICES`)."""
    stderr_tail: str
    """The agent's last stderr lines, secrets masked (docs/security.md)."""
    exit_code: int | None
    """The agent's exit status, if it exited during the turn."""

    def raise_for_error(self) -> None:
        """Raise the `RunFailed` subclass for the error kind, unless the turn succeeded."""
        if self.ok or self.error is None:
            return
        failure = RUN_FAILURES.get(self.error.kind, RunFailed)
        raise failure(
            self.error.message,
            exit_code=self.error.exit_code,
            result=self,
            retry_delay=self.error.retry_delay or None,
        )


class TurnRecord:
    """What a running turn keeps of its events for its result."""

    __slots__ = ("files_changed", "notices")

    def __init__(self) -> None:
        self.files_changed: list[FileChanged] = []
        self.notices: deque[Notice] = deque(maxlen=MAX_KEPT_NOTICES)

    def add(self, event: Event) -> None:
        if isinstance(event, FileChanged):
            self.files_changed.append(event)
        elif isinstance(event, Notice):
            self.notices.append(event)
