"""The permission prompt's keyboard: read by the event loop, so cancelling it is immediate."""

from __future__ import annotations

import io
import os
import pty
import termios
from collections.abc import Iterator

import anyio
import pytest
from anyio import wait_all_tasks_blocked
from rich.console import Console

from gemwire.cli.permission import PermissionPrompt, read_key
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
    os.write(keyboard, b"x")  # a stray key before the question
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
