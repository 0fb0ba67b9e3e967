"""One ACP session's ordering rules, sans-IO."""

from __future__ import annotations

from typing import Literal

from gemwire.errors import GemwireError

__all__ = ("AcpSessionState", "SessionPhase")


SessionPhase = Literal["idle", "prompting", "cancelling"]


class AcpSessionState:
    """One session's ordering rules: one turn at a time, and ``session/cancel`` only
    while a turn runs (once: a second cancel is not sent again)."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.phase: SessionPhase = "idle"

    def begin_turn(self) -> None:
        if self.phase != "idle":
            raise GemwireError(f"session {self.session_id} already has a turn running")
        self.phase = "prompting"

    def cancel(self) -> bool:
        """Whether to send ``session/cancel`` now."""
        if self.phase != "prompting":
            return False
        self.phase = "cancelling"
        return True

    @property
    def cancelling(self) -> bool:
        return self.phase == "cancelling"

    def end_turn(self) -> None:
        self.phase = "idle"
