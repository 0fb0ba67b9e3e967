"""A small launcher that outlives nothing it starts (Linux): ``python -I reaper.py FD PPID ARGV…``.

A tool command can leave the process tree gemwire watches behind: ``env -i setsid nohup
sleep 600 &`` clears the environment tag, changes session and group, and once its parent
exits it belongs to PID 1. This launcher makes itself a *child subreaper*
(``prctl(PR_SET_CHILD_SUBREAPER)``): every orphan among its descendants becomes its child
instead of PID 1's, so everything the program started stays below it, however it detached.

It starts ``ARGV`` (same stdin, stdout, stderr, working folder and environment), writes
to the status pipe ``FD`` ``0`` or the errno with which starting failed, and closes it.
Then:

- SIGTERM, SIGHUP, SIGINT: passed on as SIGTERM to every descendant;
- SIGUSR1: SIGKILL to every descendant, now;
- its parent (``PPID``, gemwire) is gone — killed, even with SIGKILL: SIGTERM to every
  descendant, `GRACE` seconds for the program to exit, then SIGKILL to what is left;
- the program exited: SIGKILL to every descendant that is left, each one reaped.

It then exits as the program did (the same status, or the same signal), so the caller
sees the program's own exit status. Standard library only, and not a gemwire import: it
runs as a script, and `process_tree` is shared with ``process.py`` from here.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

# mypy --platform skips the rest where this is false; at run time any OS may import it,
# as the doctest collection does.
assert sys.platform == "linux" or not TYPE_CHECKING

__all__ = ("proc_stat", "process_tree")

PR_SET_CHILD_SUBREAPER = 36
GRACE = 2.0
"""Seconds the program has to exit after SIGTERM when gemwire itself is gone."""
_POLL = 0.25
"""Seconds between looks at whether the parent is still there."""
_STOPPING = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
_WATCHED = {signal.SIGCHLD, signal.SIGUSR1, *_STOPPING}


def proc_stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time) of a live process, from /proc; None if gone or a zombie."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # fields[0] is the state (field 3 of stat), so field N is fields[N - 3].
    return None if fields[0] == "Z" else (int(fields[1]), int(fields[19]))


def process_tree(root: int) -> dict[int, int]:
    """Descendants of ``root`` as pid -> start time (empty where there is no /proc)."""
    children: dict[int, list[int]] = {}
    started: dict[int, int] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        stat = proc_stat(int(entry.name))
        if stat is not None:
            children.setdefault(stat[0], []).append(int(entry.name))
            started[int(entry.name)] = stat[1]
    tree: dict[int, int] = {}
    todo = list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        tree[pid] = started[pid]
        todo.extend(children.get(pid, ()))
    return tree


def _signal_descendants(sig: signal.Signals) -> None:
    for pid in process_tree(os.getpid()):
        with contextlib.suppress(OSError):  # exited meanwhile
            os.kill(pid, sig)


class _Reaper:
    def __init__(self, program: int) -> None:
        self.program = program
        self.status: int | None = None

    def reap(self) -> bool:
        """Reap every exited child; False once there are no children at all."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return False
            if pid == 0:
                return True
            if pid == self.program:
                self.status = status

    def kill_all(self) -> None:
        """SIGKILL every descendant until none is left (orphans keep arriving as children)."""
        while True:
            _signal_descendants(signal.SIGKILL)
            if not self.reap():
                return
            time.sleep(0.02)

    def wait(self, parent: int) -> None:
        """Until the program exits, or gemwire is gone and the grace has passed."""
        deadline = None
        while self.status is None:
            if deadline is None and os.getppid() != parent:
                _signal_descendants(signal.SIGTERM)
                deadline = time.monotonic() + GRACE
            if deadline is not None and time.monotonic() > deadline:
                return
            info = signal.sigtimedwait(_WATCHED, _POLL)
            if info is None:
                continue
            if info.si_signo in _STOPPING:
                _signal_descendants(signal.SIGTERM)
            elif info.si_signo == signal.SIGUSR1:
                _signal_descendants(signal.SIGKILL)
            self.reap()


def _exit_as(status: int | None) -> None:
    if status is None or os.WIFEXITED(status):
        sys.exit(0 if status is None else os.WEXITSTATUS(status))
    sig = os.WTERMSIG(status)
    if sig != signal.SIGKILL:
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, ())
    os.kill(os.getpid(), sig)
    sys.exit(128 + sig)  # a signal that does not end a process by default


def main(argv: list[str]) -> None:
    status_fd, parent, program_argv = int(argv[0]), int(argv[1]), argv[2:]
    os.set_inheritable(status_fd, False)
    import ctypes  # here: process.py imports this module for process_tree alone

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    # Blocked, so that none is lost between here and sigtimedwait; the program gets them
    # unblocked and at their defaults (Python ignores SIGPIPE, subprocess restores it).
    signal.pthread_sigmask(signal.SIG_BLOCK, _WATCHED)
    try:
        program = os.posix_spawnp(
            program_argv[0],
            program_argv,
            os.environ,
            setsigmask=(),
            setsigdef=(signal.SIGPIPE, signal.SIGXFSZ, *_WATCHED),
        )
    except OSError as exc:
        os.write(status_fd, str(exc.errno or 0).encode())
        sys.exit(127)
    os.write(status_fd, b"0")
    os.close(status_fd)
    reaper = _Reaper(program)
    reaper.wait(parent)
    reaper.kill_all()
    _exit_as(reaper.status)


if __name__ == "__main__":
    main(sys.argv[1:])
