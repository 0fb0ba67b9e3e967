"""Whether a process still runs, the same question on every OS the tests run on.

Linux reads ``/proc``; macOS and the BSDs ask ``ps`` (there is no ``/proc``); Windows
waits on the process's handle. A zombie is dead: it has exited, only its parent has not
reaped it yet (and in some sandboxes PID 1 never reaps orphans).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

__all__ = ("alive", "in_group")


def alive(pid: int, settle: float = 5.0) -> bool:
    """Whether ``pid`` still runs, waiting up to ``settle`` seconds for one that is exiting
    (it returns as soon as the process is gone)."""
    if sys.platform == "win32":
        return _alive_windows(pid, settle)
    else:
        deadline = time.monotonic() + settle
        while (state := _state(pid)) not in (None, "Z") and time.monotonic() < deadline:
            time.sleep(0.02)
        return state not in (None, "Z")


def in_group(pgid: int, settle: float = 5.0) -> list[int]:
    """The live processes of the process group ``pgid`` (POSIX), looking again for up to
    ``settle`` seconds while any is found."""
    deadline = time.monotonic() + settle
    while (found := _in_group(pgid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def _state(pid: int) -> str | None:
    """``pid``'s state letter (``Z``: a zombie); None once it is gone."""
    if sys.platform == "linux":
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return None
    else:
        listing = subprocess.run(
            ["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True, check=False
        )
        return listing.stdout.strip()[:1] or None


def _in_group(pgid: int) -> list[int]:
    if sys.platform == "linux":
        rows = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # exited while we looked
            rows.append((int(stat.parent.name), int(fields[2]), fields[0]))
    else:
        listing = subprocess.run(
            ["ps", "-A", "-o", "pid=", "-o", "pgid=", "-o", "stat="],
            capture_output=True,
            text=True,
            check=True,
        )
        rows = [
            (int(pid), int(group), state)
            for pid, group, state in (line.split() for line in listing.stdout.splitlines())
        ]
    return [pid for pid, group, state in rows if group == pgid and not state.startswith("Z")]


if sys.platform == "win32":
    import _winapi

    def _alive_windows(pid: int, settle: float) -> bool:
        try:
            handle = _winapi.OpenProcess(_winapi.SYNCHRONIZE, False, pid)
        except OSError:
            return False  # no such process
        try:
            waited = _winapi.WaitForSingleObject(handle, int(settle * 1000))
        finally:
            _winapi.CloseHandle(handle)
        return waited == _winapi.WAIT_TIMEOUT
