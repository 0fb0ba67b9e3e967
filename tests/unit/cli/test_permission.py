"""The permission prompt's keyboard: read by the event loop, so cancelling it is immediate."""

from __future__ import annotations

import io
import os
import pty
import select
import termios
import tty as termios_tty
from collections.abc import Iterator

import anyio
import pytest
from anyio import wait_all_tasks_blocked
from rich.console import Console

from gemwire.cli.permission import SHOWN_LINES, PermissionPrompt, read_key
from gemwire.events import PermissionOption, PermissionRequested

pytestmark = pytest.mark.anyio

OPTIONS = [
    PermissionOption(option_id="proceed_once", name="Allow", kind="allow_once"),
    PermissionOption(option_id="cancel", name="Reject", kind="reject_once"),
]


@pytest.fixture
def terminal() -> Iterator[tuple[int, int]]:
    """A pseudo-terminal: (the keyboard's end, the program's end)."""
    master, slave = pty.openpty()
    yield master, slave
    os.close(master)
    os.close(slave)


async def test_a_key_typed_while_waiting_is_read_and_one_typed_before_is_not(
    terminal: tuple[int, int],
) -> None:
    keyboard, tty = terminal
    # The kernel hands a key to the terminal's side in its own time: wait until the stray
    # one is there (else it can arrive after the question flushed the input, and be read:
    # 1 run in 12). Key by key, not line by line, or it is not readable without a newline.
    termios_tty.setcbreak(tty)
    os.write(keyboard, b"x")  # a stray key before the question
    assert select.select([tty], [], [], 10)[0] == [tty]
    got: list[str] = []

    async def read() -> None:
        got.append(await read_key(tty))

    async with anyio.create_task_group() as group:
        group.start_soon(read)
        await wait_all_tasks_blocked()
        os.write(keyboard, b"2")
    assert got == ["2"]


async def test_cancelling_the_read_ends_it_and_restores_the_terminal(
    terminal: tuple[int, int],
) -> None:
    _, tty = terminal
    before = termios.tcgetattr(tty)
    async with anyio.create_task_group() as group:
        group.start_soon(read_key, tty)
        await wait_all_tasks_blocked()
        assert termios.tcgetattr(tty) != before  # cbreak while it waits
        group.cancel_scope.cancel()
    assert termios.tcgetattr(tty) == before


async def test_a_cancelled_prompt_ends_its_line_saying_so() -> None:
    out = io.StringIO()
    waiting = anyio.Event()

    async def never() -> str:
        waiting.set()
        await anyio.sleep_forever()
        raise AssertionError

    prompt = PermissionPrompt(Console(file=out, width=80, color_system=None), read_key=never)
    request = PermissionRequested(agent="gemini", request_id="r1", options=OPTIONS)
    async with anyio.create_task_group() as group:
        group.start_soon(prompt, request)
        await waiting.wait()
        group.cancel_scope.cancel()
    assert out.getvalue().splitlines()[-1] == "  1-2, y/n, Esc cancels: cancelled"


def asked(request: PermissionRequested, title: str | None = None) -> list[str]:
    """What the prompt prints for ``request`` (answered with 1), line by line."""
    out = io.StringIO()

    async def one() -> str:
        return "1"

    prompt = PermissionPrompt(Console(file=out, width=100, color_system=None), read_key=one)
    assert anyio.run(prompt, request, title) == "proceed_once"
    return out.getvalue().splitlines()


def test_the_question_shows_the_proposed_change() -> None:
    # The request carried the diff of the edit, and the question showed only its title.
    diff = "--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-one\n+two\n"
    request = PermissionRequested(agent="gemini", request_id="r1", options=OPTIONS, diff=diff)
    assert asked(request, "Edit a.txt") == [
        "? gemini asks permission for Edit a.txt",
        "    --- a.txt",
        "    +++ a.txt",
        "    @@ -1 +1 @@",
        "    -one",
        "    +two",
        "  1 Allow   2 Reject",
        "  1-2, y/n, Esc cancels: Allow",
    ]


def test_without_a_diff_the_calls_text_is_shown_and_a_long_one_is_cut() -> None:
    content = "\n".join(f"line {n}" for n in range(1, SHOWN_LINES + 6))
    request = PermissionRequested(agent="a", request_id="r1", options=OPTIONS, content=content)
    lines = asked(request)
    assert lines[0] == "? a asks permission"
    assert lines[1 : SHOWN_LINES + 2] == [
        *(f"    line {n}" for n in range(1, SHOWN_LINES + 1)),
        "    … 5 more lines",
    ]
    assert lines[SHOWN_LINES + 2 :] == ["  1 Allow   2 Reject", "  1-2, y/n, Esc cancels: Allow"]
