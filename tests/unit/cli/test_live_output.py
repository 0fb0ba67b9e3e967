"""The live view on a terminal: what is printed above the moving part stays there as
printed, wherever the redraws fall between the prints."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator

import pyte
import pytest
from kit.corpus import RECORDED
from rich.console import Console

from gemwire import replay_gemini_stream
from gemwire.cli.live import LiveOutput
from gemwire.cli.view import View
from gemwire.events import Event

WIDTH, HEIGHT = 100, 400


def screen(events: list[Event], refresh_per_second: float) -> list[str]:
    """The lines a terminal shows once the view is closed."""
    out = io.StringIO()
    console = Console(file=out, width=WIDTH, height=HEIGHT, force_terminal=True, color_system=None)
    live = LiveOutput(console, View(cwd="__WORKSPACE__"), refresh_per_second=refresh_per_second)
    with live:
        for event in events:
            live.show(event)
        live.close()
    terminal = pyte.Screen(WIDTH, HEIGHT)
    # What a terminal's line discipline does to "\n" (ONLCR); rich writes it bare.
    pyte.Stream(terminal).feed(out.getvalue().replace("\n", "\r\n"))
    lines = [line.rstrip() for line in terminal.display]
    while lines and not lines[-1]:
        lines.pop()
    return lines


@pytest.fixture
def often_switching_threads() -> Iterator[None]:
    """Threads take turns every 10 µs instead of 5 ms: a race shows up at once."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(interval)


@pytest.mark.usefixtures("often_switching_threads")
def test_redraws_between_prints_neither_erase_nor_repeat_a_line() -> None:
    # Fixed: rich's Live redrew from its own thread between a print's cursor move and its
    # text, so the next print erased one line too many or too few: the README's demo
    # lost a diff's last line on a loaded machine.
    events = list(
        replay_gemini_stream([(RECORDED / "replace/stream-json/run-1.stdout").read_bytes()])
    )
    settled = screen(events, refresh_per_second=0.001)  # no redraw of its own
    assert settled[-1].startswith("✓ done · 1 tool call · 1 file changed")
    assert "    modified app.py" in settled
    for _ in range(20):
        assert screen(events, refresh_per_second=2000) == settled
