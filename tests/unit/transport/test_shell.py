"""A command line runs in the system shell as the standard library runs one: ``/bin/sh -c``,
on Windows ``%ComSpec% /c`` with the line handed over as written (an ACP agent's terminal
command). Runs on Windows too (the CI workflow's Windows job)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from gemwire._transport import platform
from gemwire._transport.platform import _windows
from gemwire._transport.process import Child
from gemwire.runners.acp.terminals import _command
from gemwire.wire import acp

# Windows' own event loop runs processes on asyncio alone.
pytestmark = [pytest.mark.anyio, pytest.mark.anyio_backends("asyncio")]

LINE = 'echo "a  b" && echo c'
"""Quotes, two blanks and a command separator: what a shell reads and an argv does not."""


def test_a_line_runs_as_bin_sh_c_or_on_windows_comspec_c() -> None:
    expected = (
        [_windows.comspec(os.environ), "/c", LINE]
        if sys.platform == "win32"
        else ["/bin/sh", "-c", LINE]
    )
    assert platform.shell_argv(LINE) == expected


def test_windows_runs_a_line_as_comspec_c_and_hands_the_line_over_as_it_is() -> None:
    cmd = r"C:\WINDOWS\system32\cmd.exe"
    assert _windows.comspec({"ComSpec": cmd}) == cmd
    assert _windows.comspec({"SystemRoot": r"D:\Win"}) == r"D:\Win\System32\cmd.exe"
    # A string, which the standard library starts as `%ComSpec% /c "LINE"`: a list would
    # be quoted for the C runtime, and cmd.exe reads no \" (it would run `echo \"a  b\"`).
    assert _windows.shell_command(LINE) == LINE
    assert subprocess.list2cmdline([cmd, "/c", LINE]).endswith(r'"echo \"a  b\" && echo c"')


def test_a_terminal_s_command_line_runs_in_the_shell_and_a_program_as_itself() -> None:
    line = acp.CreateTerminalRequest(session_id="s", command=LINE)
    assert _command(line) == (platform.shell_argv(LINE), LINE)
    program = acp.CreateTerminalRequest(session_id="s", command="git", args=["log", "-1"])
    assert _command(program) == (["git", "log", "-1"], None)


async def test_the_line_runs_as_the_shell_reads_it() -> None:
    async with await Child.spawn(LINE) as child:
        out = b""
        while chunk := await child.read("stdout"):
            out += chunk
        assert await child.wait() == 0
    # cmd.exe's echo prints its quotes, and the blank before `&&`.
    expected = b'"a  b" \r\nc\r\n' if sys.platform == "win32" else b"a  b\nc\n"
    assert out == expected
