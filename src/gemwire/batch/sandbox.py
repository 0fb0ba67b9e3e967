"""A sandbox per attempt: the agent, and then its verifier, confined to the attempt's workspace.

    sandbox = await Bubblewrap.found()      # SandboxUnavailable, saying how to fix it, if not
    argv = sandbox.command(["gemini", "-p"], Confinement(workspace=ws, home=home, hidden=(out,)))

`Sandbox` is the seam: a backend turns a command and a `Confinement` into the command that
runs it confined. `Bubblewrap` (Linux, Debian's ``bubblewrap``) is the one built in:

- the file system is the host's, read-only; the workspace and the private home are the only
  writable places, ``/tmp`` is a fresh one, and each ``hidden`` folder (the output folder with
  every other attempt's workspace, the hidden tests, the home the private one was copied
  from) is an empty one;
- a network of its own with nothing on it but its loopback, where `_relay` serves the model's
  port (``model_port``) through a Unix socket (``model_socket``) to the host's;
- processes of its own: when the command ends, whatever it left running is killed;
- at most `MEMORY` bytes of data (``RLIMIT_DATA``, through util-linux's ``prlimit``: Node
  reserves far more address space than it uses, so ``RLIMIT_AS`` would stop the agents), and
  `PROCESSES` processes and threads of the user (``RLIMIT_NPROC``: the kernel counts all of
  the user's, in or out of sandboxes, and never limits root);
- no capabilities, a new session (no typing into the caller's terminal).

docs/eval.md has the threat model: what this stops and what it does not.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import msgspec

from gemwire.errors import AgentNotFound, SandboxUnavailable
from gemwire.runners.process import run_process

__all__ = ("MEMORY", "PROCESSES", "Bubblewrap", "Confinement", "Sandbox")

MEMORY = 4 << 30
"""Bytes of data each process in a sandbox may allocate (the agent's, the verifier's)."""
PROCESSES = 8192
"""Processes and threads the user may have when a sandboxed one starts another: a fork bomb
stops there (a desktop's own threads count too, hence so many)."""
INSIDE_SOCKET = "/tmp/.gemwire-model.sock"
"""Where the model's Unix socket is inside the sandbox (a path short enough for any)."""
_RELAY = Path(__file__).with_name("_relay.py")
_NO_USER_NAMESPACES = (
    "bwrap cannot create a user namespace here: allow unprivileged ones "
    "(sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04+ "
    "sysctl kernel.apparmor_restrict_unprivileged_userns=0), or run in a container that permits them"
)


class Confinement(msgspec.Struct, frozen=True, kw_only=True):
    """What one confined command may see and reach."""

    workspace: str
    """The attempt's workspace: writable, and where the command starts."""
    home: str
    """A private home: writable, ``$HOME`` inside."""
    hidden: tuple[str, ...] = ()
    """Folders that look empty inside (missing ones are skipped)."""
    writable: tuple[str, ...] = ()
    """Other folders writable inside at their own paths (the verifier's reward folder)."""
    model_port: int | None = None
    """A port served on the sandbox's loopback, carried to ``model_socket`` on the host."""
    model_socket: str | None = None
    memory: int = MEMORY
    processes: int = PROCESSES


class Sandbox(Protocol):
    """A way to run a command confined (`Bubblewrap`; a container runtime could be another)."""

    def command(self, argv: Sequence[str], confinement: Confinement) -> list[str]: ...


class Bubblewrap:
    """Confines with ``bwrap`` (bubblewrap 0.4+), in user namespaces of its own."""

    def __init__(self, executable: str, prlimit: str = "prlimit") -> None:
        self.executable = executable
        self.prlimit = prlimit
        self._python = os.path.realpath(sys.executable)
        self._relay = _RELAY.read_text()

    @classmethod
    async def found(cls) -> Bubblewrap:
        """The ``bwrap`` on ``PATH``, checked to start a sandbox here; else `SandboxUnavailable`."""
        executable, prlimit = shutil.which("bwrap"), shutil.which("prlimit")
        if executable is None:
            raise SandboxUnavailable(
                "--sandbox needs bubblewrap: apt-get install bubblewrap (dnf install bubblewrap)"
            )
        if prlimit is None:
            raise SandboxUnavailable("--sandbox needs prlimit: apt-get install util-linux")
        sandbox = cls(executable, prlimit)
        with tempfile.TemporaryDirectory(prefix="gemwire-probe-") as folder:
            probe = sandbox.command(["true"], Confinement(workspace=folder, home=folder))
            try:
                ran = await run_process(probe, timeout=30, keep=4096)
            except AgentNotFound as exc:
                raise SandboxUnavailable(f"bwrap could not start a sandbox: {exc}") from exc
        if ran.returncode != 0 or ran.timed_out:
            said = ran.stderr.decode(errors="replace").strip()
            why = _NO_USER_NAMESPACES if "namespace" in said else "bwrap could not start a sandbox"
            raise SandboxUnavailable(f"{why} ({said})" if said else why)
        return sandbox

    def command(self, argv: Sequence[str], confinement: Confinement) -> list[str]:
        c = confinement
        command = [self.executable, "--unshare-all", "--unshare-user", "--die-with-parent"]
        command += ["--new-session", "--cap-drop", "ALL"]
        command += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        for folder in c.hidden:
            if os.path.isdir(folder):
                command += ["--tmpfs", folder]
        for folder in (c.workspace, c.home, *c.writable):
            command += ["--bind", folder, folder]
        command += ["--chdir", c.workspace, "--setenv", "HOME", c.home]
        command += ["--setenv", "TMPDIR", "/tmp"]
        if c.model_port is not None and c.model_socket is not None:
            command += ["--bind", c.model_socket, INSIDE_SOCKET]
        limits = [f"--data={c.memory}", f"--nproc={c.processes}"]
        limited = ["--", self.prlimit, *limits, "--"]
        if c.model_port is None or c.model_socket is None:
            return [*command, *limited, *argv]
        relay = [self._python, "-I", "-S", "-c", self._relay, str(c.model_port), INSIDE_SOCKET]
        return [*command, *limited, *relay, *argv]
