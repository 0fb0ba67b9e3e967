"""A turn's answer as it streams in: the model's text across all its model turns."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ("Answer",)


class Answer:
    """The assistant text of one turn, a blank line before text that resumes after tool
    calls (``TurnCompleted.answer``).

    ``add`` is the list's own ``append``, bound once, and the blank line goes in when the
    tools are called (dropped again if no text follows): the stream reducer adds text for
    every message line, and a check of ours there would cost that path a call.
    """

    __slots__ = ("_break_at", "_parts", "add")

    def __init__(self) -> None:
        self._parts: list[str] = []
        self.add: Callable[[str], None] = self._parts.append
        # len(_parts) just after the last blank line went in: no text since, when it is.
        self._break_at = 0

    def tools_called(self) -> None:
        count = len(self._parts)
        if count != self._break_at:  # the model wrote text before these tools
            self._parts.append("\n\n")
            self._break_at = count + 1

    def clear(self) -> None:
        self._parts.clear()
        self._break_at = 0

    def text(self) -> str:
        parts = self._parts
        if parts and len(parts) == self._break_at:  # no text after the last tools
            return "".join(parts[:-1])
        return "".join(parts)
