"""Where the events go: a live view on a terminal, a plain transcript, JSON lines, or the answer.

Every command that streams events (``run``, ``replay``, ``acp``, ``demo``) picks its output
with `open_output` and then only calls `Output.show` per event (or `Output.show_all` per
batch) and `Output.close` at the end. The live view is rich's ``Live`` around a `View`:
settled blocks are printed once above it, and the moving part (streaming text, running tool
calls, the footer) is redrawn in place ten times a second. Anything that is not a terminal,
or ``NO_COLOR``, or ``TERM=dumb``, gets the plain, colourless, line-by-line `Transcript`
instead.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, BinaryIO, Protocol, Self, TextIO

from gemwire.cli.safe_text import terminal_safe, terminal_safe_event
from gemwire.cli.transcript import Transcript
from gemwire.events import Event, PermissionRequested, TurnCompleted, encode_event, encode_events

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.live import Live

    from gemwire.cli.view import View
    from gemwire.runners.acp import PermissionHandler, PermissionRequest

__all__ = (
    "JsonOutput",
    "LiveOutput",
    "Output",
    "PlainOutput",
    "QuietOutput",
    "open_output",
    "wants_live_view",
)


class Output(Protocol):
    """Shows a stream of events; used as a context manager around the stream."""

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc_info: object) -> None: ...

    def show(self, event: Event) -> None:
        """Show one event as it arrives."""

    def show_all(self, events: Iterable[Event]) -> None:
        """Show events that arrived together (JSON lines are written at once)."""
        for event in events:
            self.show(event)

    def close(self, resume: str | None = None) -> None:
        """The stream ended; ``resume`` is the command that continues the session, if any."""


class _Plain(Output):
    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        return None


class JsonOutput(_Plain):
    """The normalized events as JSON lines (``--json``), flushed one by one."""

    def __init__(self, out: BinaryIO) -> None:
        self._out = out

    def show(self, event: Event) -> None:
        self._out.write(encode_event(event))
        self._out.flush()

    def show_all(self, events: Iterable[Event]) -> None:
        # One encoder call, one write and one flush for the lot: a replayed file's
        # thousands of events cost a write each otherwise.
        self._out.write(encode_events(events))
        self._out.flush()

    def close(self, resume: str | None = None) -> None:
        return None


class QuietOutput(_Plain):
    """Only the final answer (``--quiet``); why a turn failed goes to stderr."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self._out, self._err = out, err
        self._turn: TurnCompleted | None = None

    def show(self, event: Event) -> None:
        if isinstance(event, TurnCompleted):
            self._turn = event

    def close(self, resume: str | None = None) -> None:
        turn = self._turn
        if turn is None:
            return
        # Exact into a pipe or a file (`answer=$(gemwire run -q ...)`); inert on a terminal.
        answer = terminal_safe(turn.answer) if self._out.isatty() else turn.answer
        if answer:
            self._out.write(answer.rstrip("\n") + "\n")
            self._out.flush()
        if turn.error is not None:
            error = terminal_safe_event(turn.error)
            self._err.write(f"gemwire: {error.kind}: {error.message}\n")


class PlainOutput(_Plain):
    """The plain transcript: no colour, no cursor movement, one line at a time."""

    def __init__(
        self, out: TextIO, *, verbose: bool = False, clock: Callable[[], float] | None = None
    ) -> None:
        self._out = out
        self._transcript = Transcript(out, verbose=verbose, clock=clock)

    def show(self, event: Event) -> None:
        self._transcript.write(terminal_safe_event(event))
        self._out.flush()

    def close(self, resume: str | None = None) -> None:
        if resume:
            self._out.write(f"resume: {terminal_safe(resume)}\n")
            self._out.flush()


class LiveOutput(Output):
    """The live view: settled blocks printed once, the moving part redrawn in place.

    The view is redrawn by a thread of ours, not by ``Live``'s own: ``Live`` moves the
    cursor up by the height of the last drawing it made, and a redraw written between a
    print's cursor move and its text (rich locks the one, not the other) left that height
    wrong, so a print erased the last line above it, or left a stale one behind. One lock
    (`_lock`, taken before rich's) now keeps prints, redraws and the view's state apart.
    """

    def __init__(self, console: Console, view: View, *, refresh_per_second: float = 10) -> None:
        self.console = console
        self.view = view
        self._rate = refresh_per_second
        self._lock = threading.RLock()  # a redraw reads the view while holding it
        self._live: Live | None = None
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def _moving(self) -> RenderableType:
        with self._lock:
            return self.view.moving()

    def _tick(self) -> None:
        while not self._stop.wait(1 / self._rate):
            with self._lock:
                if self._live is not None and self._live.is_started:
                    self._live.refresh()

    def __enter__(self) -> Self:
        from rich.live import Live

        self._live = Live(
            get_renderable=self._moving,
            console=self.console,
            auto_refresh=False,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._live.start(refresh=True)
        self._stop.clear()
        self._ticker = threading.Thread(target=self._tick, name="gemwire-live-view", daemon=True)
        self._ticker.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
        with self._lock:
            if self._live is not None:
                self._live.stop()
                self._live = None

    def show(self, event: Event) -> None:
        with self._lock:
            blocks = self.view.apply(terminal_safe_event(event))
            for block in blocks:
                self.console.print(block)
            if blocks and self._live is not None:
                self._live.refresh()

    def heading(self, text: str) -> None:
        """A line of gemwire's own (``sessions show``'s file headers) above the view."""
        from rich.text import Text

        with self._lock:
            self.console.print(Text(terminal_safe(text)), soft_wrap=True)
            if self._live is not None:
                self._live.refresh()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Stop redrawing while something else uses the terminal (a permission prompt)."""
        live = self._live
        if live is None:
            yield
            return
        with self._lock:
            live.stop()
        try:
            yield
        finally:
            with self._lock:
                if self._live is live:  # not closed meanwhile: a spinner drawn now would stay
                    live.start(refresh=True)

    async def ask_permission(self, request: PermissionRequested) -> str | None:
        """Ask at the keyboard which offered option to take (see `PermissionPrompt`)."""
        from gemwire.cli.permission import PermissionPrompt

        with self.paused():
            safe = terminal_safe_event(request)  # its title, diff and text too
            title = self.view.title_of(request.call_id) or safe.title
            chosen = await PermissionPrompt(self.console)(safe, title)
        # The agent gets back the option id it sent, not the one made safe to show.
        offered = {
            s.option_id: o.option_id for s, o in zip(safe.options, request.options, strict=True)
        }
        return offered.get(chosen, chosen) if chosen is not None else None

    def permission_handler(self, agent: Callable[[], str]) -> PermissionHandler:
        """An ACP client's permission handler that asks here (`ask_permission`), one
        question at a time (two at once would share one keyboard); ``agent`` names the
        agent as its events do."""
        import anyio

        one_question = anyio.Lock()

        async def ask(request: PermissionRequest) -> str | None:
            event = PermissionRequested(
                agent=agent(),
                session_id=request.session_id,
                request_id=request.request_id,
                call_id=request.call_id,
                options=request.options,
                title=request.title,
                kind=request.kind,
                diff=request.diff,
                content=request.content,
            )
            async with one_question:
                return await self.ask_permission(event)

        return ask

    def close(self, resume: str | None = None) -> None:
        self.__exit__()
        with self._lock:
            blocks = self.view.close(terminal_safe(resume) if resume else None)
        for block in blocks:
            self.console.print(block)


def wants_live_view(stream: TextIO, environ: Mapping[str, str] = os.environ) -> bool:
    """A terminal that takes colour and cursor movement: a TTY, no ``NO_COLOR``, not dumb."""
    return stream.isatty() and not environ.get("NO_COLOR") and environ.get("TERM", "") != "dumb"


def open_output(
    *,
    as_json: bool = False,
    quiet: bool = False,
    verbose: bool = False,
    cwd: str | None = None,
    timed: bool = True,
) -> Output:
    """The output for stdout: JSON lines, the answer only, the live view, or the transcript.

    ``timed``: the events happen now (a run, a pipe), so tool calls and the turn are timed.
    """
    if as_json:
        return JsonOutput(sys.stdout.buffer)
    if quiet:
        return QuietOutput(sys.stdout, sys.stderr)
    if wants_live_view(sys.stdout):
        from rich.console import Console

        from gemwire.cli.view import View

        view = View(cwd=cwd, verbose=verbose, clock=time.monotonic if timed else None)
        return LiveOutput(Console(highlight=False), view)
    return PlainOutput(sys.stdout, verbose=verbose, clock=time.monotonic if timed else None)
