"""Every gemwire module imports where the POSIX-only standard library is missing.

Windows cannot run here, so a subprocess approximates its standard library: the modules
Windows lacks (``fcntl``, ``termios``, ``pwd``, ``resource``, ...) cannot be imported, the
``os`` and ``signal`` names it lacks are gone, ``msvcrt`` is a stub, and ``sys.platform``
is ``"win32"`` — set after the third-party packages loaded (they pick their own platform
code, which this machine does not have), before any gemwire module loads again. Together
with ``mypy --platform win32`` (``make check``) this is what proves the import here.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

WINDOWS_STDLIB = textwrap.dedent(
    """
    import importlib, json, os, pkgutil, signal, sys, types
    import gemwire

    names = [m.name for m in pkgutil.walk_packages(gemwire.__path__, "gemwire.")]
    unavailable = []  # an optional dependency (Ray) that is not installed here
    for name in names:  # loads the third-party packages as this OS has them
        try:
            importlib.import_module(name)
        except ImportError:
            unavailable.append(name)
    for name in [m for m in sys.modules if m == "gemwire" or m.startswith("gemwire.")]:
        del sys.modules[name]

    for name in ("fcntl", "termios", "tty", "pty", "pwd", "grp", "resource", "posix"):
        sys.modules[name] = None
    for name in (
        "O_NOFOLLOW", "O_CLOEXEC", "O_NONBLOCK", "O_DIRECTORY", "getuid", "geteuid",
        "killpg", "setsid", "getpgid", "fchmod", "mkfifo", "posix_spawnp", "WNOHANG",
        "set_blocking", "fork",
    ):
        if hasattr(os, name):
            delattr(os, name)
    for name in (
        "SIGHUP", "SIGKILL", "SIGUSR1", "SIGCHLD", "SIGPIPE", "SIGXFSZ", "SIGQUIT",
        "SIGRTMIN", "SIGRTMAX", "pthread_sigmask", "sigwait", "sigtimedwait", "SIG_BLOCK",
    ):
        if hasattr(signal, name):
            delattr(signal, name)
    os.O_BINARY = 0x8000  # what Windows has and Linux lacks
    signal.SIGBREAK = 21  # Ctrl-Break, Windows only
    msvcrt = types.ModuleType("msvcrt")
    msvcrt.LK_NBLCK = 2
    msvcrt.locking = msvcrt.getwch = lambda *args: None
    sys.modules["msvcrt"] = msvcrt
    sys.platform = "win32"

    failed = {}
    for name in names:
        if name in SKIPPED or name in unavailable:
            continue
        try:
            importlib.import_module(name)
        except Exception as exc:
            failed[name] = f"{type(exc).__name__}: {exc}"
    print(json.dumps({"failed": failed, "unavailable": unavailable}))
    """
)

OTHER_OS = (
    "gemwire._transport.reaper",  # the Linux launcher script
    "gemwire._transport.platform._linux",  # chosen on Linux only
    "gemwire.batch._relay",  # run as a script inside a bubblewrap sandbox, Linux's
)
"""Modules another OS's code path alone imports (each still type-checked for its OS)."""


OPTIONAL = {"gemwire.batch._ray"}
"""Modules of an optional dependency, left out where it is not installed."""


def _failures(prelude: str, skipped: tuple[str, ...]) -> dict[str, str]:
    code = f"SKIPPED = {skipped!r}\n{prelude}"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    outcome = json.loads(done.stdout)
    # On Windows itself the first pass already lacks the POSIX modules.
    here = set(OTHER_OS) if sys.platform == "win32" else set()
    assert set(outcome["unavailable"]) <= OPTIONAL | here
    failures: dict[str, str] = outcome["failed"]
    return failures


def test_every_module_imports_without_the_posix_standard_library() -> None:
    assert _failures(WINDOWS_STDLIB, OTHER_OS) == {}


@pytest.mark.skipif(sys.platform == "win32", reason="Windows lacks them itself")
def test_the_prelude_removes_what_windows_lacks() -> None:
    # The approximation is real: the Linux modules left out above do fail under it.
    failures = _failures(WINDOWS_STDLIB, ())
    assert failures == {
        "gemwire._transport.reaper": "AttributeError: module 'signal' has no attribute 'SIGHUP'",
        "gemwire._transport.platform._linux": (
            "ModuleNotFoundError: import of fcntl halted; None in sys.modules"
        ),
        "gemwire.batch._relay": "AssertionError: ",
    }
