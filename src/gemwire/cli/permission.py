"""Answering an agent's permission request at the keyboard.

    prompt = PermissionPrompt(console)
    option_id = await prompt(request, title="rm -rf build")   # one of request.options, or None

The question shows what it is about: the proposed change (the request's ``diff``), else the
call's text (``content``), at most `SHOWN_LINES` lines. The request must be made
terminal-safe first (`safe_text.terminal_safe_event`): it is printed as it is.

Only an option the agent offered can come back; ids are never invented. The keyboard is
waited on by the event loop, not by a thread: cancelling the prompt (a turn stopped by
Ctrl-C) ends it at once, with the terminal as it was, and nothing is left blocked in a read
that would hold the process open. Pause a live view around it
(`gemwire.cli.live.LiveOutput.ask_permission` does both the pause and the title).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from gemwire.events import PermissionOption, PermissionRequested

__all__ = ("SHOWN_LINES", "PermissionPrompt", "choose", "read_key")

SHOWN_LINES = 40
"""Lines of a request's diff (or text) shown above its options; the rest are counted."""

_CANCEL_KEYS = frozenset({"\x1b", "q", "\x03", "\x04", ""})
"""Esc, q, Ctrl-C, Ctrl-D, end of input: no answer (the request is cancelled)."""

_SHORTCUTS = {
    "y": ("allow_once", "allow_always"),
    "a": ("allow_always",),
    "n": ("reject_once", "reject_always"),
    "r": ("reject_always",),
}


def choose(options: list[PermissionOption], key: str) -> tuple[bool, str | None]:
    """What a key means: ``(True, option_id)``, ``(True, None)`` to cancel, or
    ``(False, None)`` for a key that picks nothing (ask again).

    Digits pick by position; ``y`` the first allow (once before always), ``a`` allow
    always, ``n`` the first reject (once before always), ``r`` reject always.
    """
    if key in _CANCEL_KEYS:
        return True, None
    if key.isdigit() and 1 <= int(key) <= len(options):
        return True, options[int(key) - 1].option_id
    for kind in _SHORTCUTS.get(key.lower(), ()):
        for option in options:
            if option.kind == kind:
                return True, option.option_id
    return False, None


async def read_key(fd: int | None = None) -> str:
    """One key from the terminal ``fd`` (default stdin), without waiting for Enter (``""`` at
    end of input). Keys typed before the call are discarded.

    Cancellable at any moment: the wait is the event loop's (``anyio.wait_readable``), and
    the terminal's mode is restored however it ends.
    """
    import anyio

    if sys.platform == "win32":
        import msvcrt

        # The console reads keys unechoed without a mode to set; in a thread, abandoned
        # on cancel, since the event loop cannot wait on a console.
        return await anyio.to_thread.run_sync(msvcrt.getwch, abandon_on_cancel=True)
    else:
        import termios
        import tty

        fd = sys.stdin.fileno() if fd is None else fd
        saved = termios.tcgetattr(fd)
        try:
            tty.setcbreak(fd)  # TCSAFLUSH: a stray key typed earlier never answers
            await anyio.wait_readable(fd)
            return os.read(fd, 1).decode(errors="replace")
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)


class PermissionPrompt:
    """Asks a person which of the offered options to take.

    Args:
        console: where the question goes.
        read_key: waits for one key press; by default on the terminal on stdin. Without a
            terminal (and no ``read_key``) nobody can answer: the prompt returns ``None``.
    """

    def __init__(
        self, console: Console, *, read_key: Callable[[], Awaitable[str]] | None = None
    ) -> None:
        self.console = console
        self._read_key = read_key

    async def __call__(self, request: PermissionRequested, title: str | None = None) -> str | None:
        """The ``option_id`` chosen from ``request.options``, or ``None`` (cancelled, by a
        key or by cancelling the call)."""
        from rich.text import Text

        reader = self._read_key
        if reader is None:
            if not sys.stdin.isatty():
                return None
            reader = read_key
        options = request.options
        if not options:
            return None
        what = f" for {title}" if title else ""
        self.console.print(
            Text.assemble(
                ("? ", "bold magenta"), (f"{request.agent} asks permission{what}", "bold")
            )
        )
        self._show_what(request)
        choices = Text("   ").join(
            Text.assemble((str(number), "bold cyan"), f" {option.name}")
            for number, option in enumerate(options, start=1)
        )
        self.console.print(Text("  ") + choices)
        keys = f"1-{len(options)}" if len(options) > 1 else "1"
        self.console.print(Text(f"  {keys}, y/n, Esc cancels: ", style="dim"), end="")
        answered, picked = False, None
        try:
            while not answered:
                answered, picked = choose(options, await reader())
        finally:  # cancelled too: the question's line ends, and says so
            chosen = next((o.name for o in options if o.option_id == picked), "cancelled")
            self.console.print(chosen, style="magenta" if picked else "yellow")
        return picked

    def _show_what(self, request: PermissionRequested) -> None:
        """The proposed change (or the call's text) under the question, cut short."""
        from rich.text import Text

        from gemwire.cli.render import diff_style

        shown = request.diff or request.content
        if not shown:
            return
        lines = shown.splitlines()
        for line in lines[:SHOWN_LINES]:
            style = diff_style(line) if request.diff else "dim"
            self.console.print(Text("    ") + Text(line, style=style))
        if len(lines) > SHOWN_LINES:
            self.console.print(f"    … {len(lines) - SHOWN_LINES} more lines", style="dim")
