"""Answering an agent's ``elicitation/create`` at the keyboard (``gemwire acp`` on a terminal).

    prompt = ElicitationPrompt(console)
    answer = await prompt("acp:codex-acp", request)   # accept (with values), decline, cancel

The person first chooses to answer (``y``), decline (``n``) or cancel (Esc); a form then asks
each field on a line of its own (Enter keeps an optional field empty, Esc cancels the
whole answer), a URL is shown to open and ``y`` says it is done. Keys are read as
`gemwire.cli.permission.read_key` reads them: cancelling the prompt ends it at once. The
agent's words are made safe for the terminal before they are shown.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from gemwire.cli.permission import read_key
from gemwire.cli.safe_text import terminal_safe
from gemwire.runners.acp.elicitation import (
    ElicitationAnswer,
    ElicitationHandler,
    ElicitationRequest,
)

if TYPE_CHECKING:
    from rich.console import Console

    from gemwire.cli.live import LiveOutput

__all__ = ("ElicitationPrompt", "keyboard_elicitation", "parse_value")

_CANCEL_KEYS = frozenset({"\x1b", "\x03", "\x04", ""})
"""Esc, Ctrl-C, Ctrl-D, end of input."""

_ERASE_KEYS = frozenset({"\x7f", "\b"})

_TRUE = frozenset({"y", "yes", "true", "1"})
_FALSE = frozenset({"n", "no", "false", "0"})


def parse_value(schema: dict[str, Any], text: str) -> tuple[bool, Any]:
    """``(True, value)`` for ``text`` read as a field of JSON Schema ``schema``, else
    ``(False, None)``.

    >>> parse_value({"type": "integer"}, "42"), parse_value({"type": "integer"}, "4.2")
    ((True, 42), (False, None))
    >>> parse_value({"type": "boolean"}, "yes"), parse_value({"type": "array"}, "a, b")
    ((True, True), (True, ['a', 'b']))
    >>> parse_value({"type": "string", "enum": ["red", "blue"]}, "green")
    (False, None)
    """
    kind = schema.get("type")
    value: Any
    try:
        if kind == "integer":
            value = int(text)
        elif kind == "number":
            value = float(text)
        elif kind == "boolean":
            if text.lower() not in _TRUE | _FALSE:
                return False, None
            value = text.lower() in _TRUE
        elif kind == "array":
            value = [part.strip() for part in text.split(",") if part.strip()]
        else:
            value = text
    except ValueError:
        return False, None
    choices = schema.get("enum")
    if isinstance(choices, list) and value not in choices:
        return False, None
    return True, value


class ElicitationPrompt:
    """Asks a person for what an agent elicits.

    Args:
        console: where the questions go.
        read_key: waits for one key press; by default on the terminal on stdin. Without a
            terminal (and no ``read_key``) nobody can answer: the prompt declines.
    """

    def __init__(
        self, console: Console, *, read_key: Callable[[], Awaitable[str]] | None = None
    ) -> None:
        self.console = console
        self._read_key = read_key

    async def __call__(self, agent: str, request: ElicitationRequest) -> ElicitationAnswer:
        reader = self._read_key
        if reader is None:
            if not sys.stdin.isatty():
                return ElicitationAnswer(action="decline")
            reader = read_key
        print_ = self.console.print
        print_(f"? {agent} asks: {terminal_safe(request.message)}", style="bold", markup=False)
        if request.url is not None:
            print_(f"  open {terminal_safe(request.url)}", markup=False)
            question = "  y when done, n declines, Esc cancels: "
        else:
            question = "  y to answer, n declines, Esc cancels: "
        print_(question, style="dim", end="")
        while (key := (await reader()).lower()) not in ("y", "n") and key not in _CANCEL_KEYS:
            pass
        action = {"y": "accept", "n": "decline"}.get(key, "cancel")
        print_(action, style="magenta")
        if action != "accept" or request.mode == "url":
            return ElicitationAnswer(action=action)  # type: ignore[arg-type]
        content: dict[str, Any] = {}
        for name, schema in request.fields.items():
            value = await self._field(reader, name, schema, name in request.required)
            if value is _CANCELLED:
                return ElicitationAnswer(action="cancel")
            if value is not _EMPTY:
                content[name] = value
        return ElicitationAnswer(action="accept", content=content)

    async def _field(
        self,
        reader: Callable[[], Awaitable[str]],
        name: str,
        schema: dict[str, Any],
        required: bool,
    ) -> Any:
        label = terminal_safe(str(schema.get("title") or name))
        hint = schema.get("enum") or schema.get("type") or "text"
        mark = "" if required else ", Enter skips"
        while True:
            self.console.print(
                f"  {label} ({terminal_safe(str(hint))}{mark}): ", end="", markup=False
            )
            text = await self._line(reader)
            if text is None:
                return _CANCELLED
            if not text and not required:
                return _EMPTY
            ok, value = parse_value(schema, text)
            if ok and text:
                return value
            self.console.print("  not a valid answer", style="yellow")

    async def _line(self, reader: Callable[[], Awaitable[str]]) -> str | None:
        """One line typed (echoed as typed), or ``None`` when cancelled."""
        typed: list[str] = []
        while True:
            key = await reader()
            if key in _CANCEL_KEYS:
                self.console.print("cancelled", style="yellow")
                return None
            if key in ("\r", "\n"):
                self.console.print()
                return "".join(typed).strip()
            if key in _ERASE_KEYS:
                if typed:
                    typed.pop()
                    self.console.print("\b \b", end="", markup=False, highlight=False)
            elif key.isprintable():
                typed.append(key)
                self.console.print(key, end="", markup=False, highlight=False)


_CANCELLED = object()
_EMPTY = object()


def keyboard_elicitation(live: LiveOutput, agent: str) -> ElicitationHandler:
    """The handler ``gemwire acp`` gives its client on a terminal: one question at a time,
    the live view paused around it."""
    import anyio

    one_question = anyio.Lock()

    async def ask(request: ElicitationRequest) -> ElicitationAnswer:
        async with one_question:
            with live.paused():
                return await ElicitationPrompt(live.console)(agent, request)

    return ask
