"""What differs by OS about a child's process tree, chosen once by ``sys.platform``.

One small interface per concern (`_api`): `ProcessTree` (keep a child's descendants
together and stop them), `OutputPipe` (stdout and stderr: gemwire's own large pipes, or on
Windows the process's, whose event loop waits on sockets only) and `Launcher` (the Linux
subreaper in between; None elsewhere); and the system shell a command line runs in
(`shell_argv`, `shell_command`). The implementations:
``_linux`` (``/proc``, the subreaper), ``_darwin`` (macOS/BSD: ``ps``), both on
``_posix`` (sessions and signals), and ``_windows`` (a Job Object that kills on close).
``mypy --platform linux|darwin|win32`` checks each as its OS sees it (``make check``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from gemwire._transport.platform._api import Launcher, OutputPipe, PopenOptions, ProcessTree

__all__ = (
    "Launcher",
    "OutputPipe",
    "PopenOptions",
    "ProcessTree",
    "launcher",
    "new_tree",
    "output_pipe",
    "shell_argv",
    "shell_command",
)

if sys.platform == "win32":
    from gemwire._transport.platform import _windows as _os
elif sys.platform == "linux":
    from gemwire._transport.platform import _linux as _os
else:
    from gemwire._transport.platform import _darwin as _os


def new_tree(marker: bytes) -> ProcessTree:
    """The tree of a child whose processes carry ``marker`` (``NAME=value``) in their
    environment, as this OS keeps it."""
    return _os.new_tree(marker)


def output_pipe(capacity: int) -> OutputPipe:
    """A pipe for stdout or stderr, of ``capacity`` bytes where this OS allows it."""
    return _os.output_pipe(capacity)


def launcher() -> Launcher | None:
    """The launcher children start through here, if any."""
    return _os.launcher()


def shell_argv(line: str) -> list[str]:
    """The argv that runs the command line ``line`` in this OS's shell, as the standard
    library's ``shell=True`` runs it: ``/bin/sh -c LINE``; on Windows ``%ComSpec% /c LINE``."""
    return _os.shell_argv(line)


def shell_command(line: str) -> str | Sequence[str]:
    """What `anyio.open_process` is given to run ``line`` in this OS's shell.

    POSIX: `shell_argv`, a list, so that a launcher can go before it. Windows: the line
    itself, which the standard library starts as ``%ComSpec% /c "LINE"``, the line as
    written; a list would be quoted for the C runtime (``\\"`` for a quote), which
    ``cmd.exe`` does not read, and Python has no other way to hand over a line verbatim.
    """
    return _os.shell_command(line)
