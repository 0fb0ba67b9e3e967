"""A turn's answer as it streams in: the model's text across all its model turns."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ("Answer",)


class Answer:
    """The assistant text of one turn, a blank line before text that resumes after tool
    calls (``TurnCompleted.answer``).

    ``add`` is the list's own ``append``, bound once: the stream reducer calls it for every
    message line, and a method of ours would cost that path a call.
    """

    __slots__ = ("_parts", "add")

    def __init__(self) -> None:
        # None marks tool calls: the model turn before them has ended.
        self._parts: list[str | None] = []
        self.add: Callable[[str], None] = self._parts.append

    def tools_called(self) -> None:
        self._parts.append(None)

    def clear(self) -> None:
        self._parts.clear()

    def text(self) -> str:
        texts: list[str] = []
        after_tools = False
        for part in self._parts:
            if part is None:
                after_tools = True
                continue
            if after_tools and texts:
                texts.append("\n\n")  # text of a later model turn
            after_tools = False
            texts.append(part)
        return "".join(texts)
