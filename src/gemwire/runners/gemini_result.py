"""How a Gemini run ended (`RunResult`), and what continues its session (`ResumeToken`)."""

from __future__ import annotations

import re

import msgspec

from gemwire.runners.discovery import GeminiExecutable
from gemwire.runners.turn_result import TurnResult

__all__ = ("ResumeToken", "RunResult", "parse_resume_line")


class ResumeToken(msgspec.Struct, frozen=True, kw_only=True):
    """What continues a session: the engine and its session id."""

    engine: str
    value: str

    @property
    def command(self) -> str:
        """The canonical resume line, e.g. ``gemini --resume 5e1e1ecd-...``."""
        return f"{self.engine} --resume {self.value}"


_RESUME_LINE = re.compile(r"\bgemini\s+(?:--resume|-r)\s+([A-Za-z0-9_-]+)")


def parse_resume_line(text: str) -> ResumeToken | None:
    """Find a ``gemini --resume <id>`` line in text (the last one wins)."""
    matches = _RESUME_LINE.findall(text)
    return ResumeToken(engine="gemini", value=matches[-1]) if matches else None


class RunResult(TurnResult, frozen=True, kw_only=True):
    """How a run ended (the shared `TurnResult`, and the executable that ran)."""

    executable: GeminiExecutable

    @property
    def resume(self) -> ResumeToken | None:
        return ResumeToken(engine="gemini", value=self.session_id) if self.session_id else None
