"""Shared by the end-to-end tests: a real terminal to run gemwire in."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import termios
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack

import pyte
import pytest
from kit.docs_shell import Shell, shared_served_shell
from kit.shared_agents import AgentPool

COLUMNS = 100


class Screen:
    """What a terminal shows after the program ended, and the bytes it was sent."""

    def __init__(self, raw: bytes, exit_code: int, rows: int, columns: int) -> None:
        self.raw = raw
        self.exit_code = exit_code
        screen = pyte.Screen(columns, rows)
        pyte.ByteStream(screen).feed(raw)
        lines = [line.rstrip() for line in screen.display]
        while lines and not lines[-1]:
            lines.pop()
        self.lines = lines

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def on_terminal(
    argv: list[str],
    env: dict[str, str],
    rows: int = 200,
    columns: int = COLUMNS,
    keys: Sequence[tuple[bytes, bytes | signal.Signals]] = (),
) -> Screen:
    """Run ``argv`` with a pseudo-terminal as stdin, stdout and stderr.

    ``keys``: (text, key) pairs, in order: once the screen's bytes show ``text`` (after
    the previous key was typed), ``key`` is typed half a second later, as a person
    answering a prompt (a prompt may discard keys typed before it was ready). A signal
    is sent to the program instead, as the terminal sends Ctrl-C's SIGINT.
    """
    pending = list(keys)
    seen = 0
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    env = {**env, "TERM": "xterm-256color", "COLUMNS": str(columns), "LINES": str(rows)}
    process = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
    )
    os.close(slave)
    raw = bytearray()
    deadline = time.monotonic() + 90
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:  # EIO: every slave end is closed
                break
            if not chunk:
                break
            raw += chunk
            if pending and pending[0][0] in raw[seen:]:
                seen = len(raw)
                time.sleep(0.5)
                key = pending.pop(0)[1]
                if isinstance(key, signal.Signals):
                    process.send_signal(key)
                else:
                    os.write(master, key)
        exit_code = process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(master)
    return Screen(bytes(raw), exit_code, rows, columns)


@pytest.fixture
def terminal() -> Callable[..., Screen]:
    """``terminal(argv, env, rows=200, columns=100)``: run argv in a pseudo-terminal, get the
    `Screen`."""
    return on_terminal


@pytest.fixture(scope="module")
def agent_pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AgentPool]:
    """The module's shared agents (`kit.shared_agents.AgentPool`), stopped after its last
    case. (A fixture here, not in tests/e2e/agents/: two conftest.py files under one folder
    clash in the doctest collection of ``--doctest-modules``.)"""
    with ExitStack() as stack:
        yield AgentPool(tmp_path_factory, stack)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[], Shell]]:
    """The docs' served shell, one for the module that asks (`shared_served_shell`)."""
    with shared_served_shell(tmp_path_factory.mktemp("served")) as fresh:
        yield fresh


@pytest.fixture
def shell(served: Callable[[], Shell]) -> Shell:
    """The docs' served shell, its home and workspace as `SERVE` left them: a block's
    commands see only what the block's own earlier commands did."""
    return served()
