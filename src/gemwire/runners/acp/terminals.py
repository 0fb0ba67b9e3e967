"""Terminals an ACP agent runs through the client (``terminal/*``), behind a command policy.

Offered only when the host gives a `TerminalPolicy` (headless, the default is none: the
capability is not advertised and every ``terminal/create`` is refused).

The policy contract: it gets a `TerminalRequest` — the argv that will run, the folder it
runs in (inside the session's folders, checked first) and the variables the agent asked
to set — and returns whether to run it. It sees everything that will differ from the
client's own environment: a terminal's environment is the agent's (``AcpOptions.env``,
plus this process's unless ``inherit_env`` is false) with the requested variables on
top, nothing else. A policy that allows ``git status`` should refuse a request that also
sets ``GIT_CONFIG_*`` (or any variable it does not expect); `allow_all_commands` allows
everything. Old two-argument policies ``(argv, cwd) -> bool`` still work (deprecated:
they cannot see the variables). Each terminal is
a child in its own process group, started and stopped like the Gemini runner's (its
whole tree is killed on ``terminal/kill``, ``terminal/release`` and when the client
closes). Output (stdout and stderr together) is kept up to ``outputByteLimit`` bytes,
dropping from the start at a character boundary, as the spec asks.
"""

from __future__ import annotations

import inspect
import signal
import sys
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path

import anyio
import msgspec
from anyio.abc import TaskGroup

from gemwire._transport.platform import shell_argv
from gemwire._transport.process import Child
from gemwire.errors import AccessDenied, GemwireError
from gemwire.runners.acp.files import ConfinedFileSystem
from gemwire.wire import acp

__all__ = (
    "DEFAULT_OUTPUT_BYTE_LIMIT",
    "TerminalPolicy",
    "TerminalRequest",
    "Terminals",
    "allow_all_commands",
)

DEFAULT_OUTPUT_BYTE_LIMIT = 1024 * 1024
"""Output kept when the agent names no limit."""


class TerminalRequest(msgspec.Struct, frozen=True, kw_only=True):
    """A command an agent asks to run, as the policy sees it."""

    session_id: str
    argv: tuple[str, ...]
    """What will run (a command line with spaces and no args runs in the system shell:
    ``/bin/sh -c LINE``, on Windows ``%ComSpec% /c LINE``)."""
    cwd: str
    env: dict[str, str]
    """The variables the agent asked to set (on top of the agent's own environment)."""


TerminalPolicy = Callable[[TerminalRequest], bool]
"""Decides whether a command may run; see the module docstring for the contract."""


def allow_all_commands(request: TerminalRequest) -> bool:
    """The policy that allows every command (for trusted, sandboxed hosts)."""
    return True


def _adopt(policy: Callable[..., bool]) -> TerminalPolicy:
    """Wrap a deprecated ``(argv, cwd)`` policy."""
    try:
        parameters = inspect.signature(policy).parameters
    except (TypeError, ValueError):
        return policy
    if len(parameters) != 2:
        return policy
    warnings.warn(
        "a terminal policy takes one TerminalRequest now (argv, cwd and env); "
        "(argv, cwd) policies are deprecated",
        DeprecationWarning,
        stacklevel=4,
    )
    return lambda request: bool(policy(list(request.argv), request.cwd))


def _command(request: acp.CreateTerminalRequest) -> tuple[list[str], str | None]:
    """The argv that will run, and the command line when it runs in the system shell.

    Agents differ: most pass a program and its arguments, some a whole command line
    (a command with spaces and no arguments), which runs as the standard library runs a
    shell command: ``/bin/sh -c``, on Windows ``%ComSpec% /c`` with the line as written.

    >>> _command(acp.CreateTerminalRequest(session_id="s", command="ls", args=["-l"]))
    (['ls', '-l'], None)
    """
    if not request.args and any(c.isspace() for c in request.command):
        return shell_argv(request.command), request.command
    return [request.command, *request.args], None


def _signal_name(number: int) -> str:
    """The name of the signal that ended a command, for any number a process can die of.

    ``signal.Signals`` names only the signals Python knows: a real-time one (``kill -40``)
    is named from ``SIGRTMIN`` as ``kill -l`` names it, and an unknown number as itself.

    >>> _signal_name(15), _signal_name(1000)
    ('SIGTERM', 'SIG1000')
    >>> sys.platform != "linux" or _signal_name(int(signal.SIGRTMIN) + 6) == "SIGRTMIN+6"
    True
    """
    try:
        return signal.Signals(number).name
    except ValueError:
        pass
    if sys.platform == "linux" and signal.SIGRTMIN < number < signal.SIGRTMAX:
        return f"SIGRTMIN+{number - signal.SIGRTMIN}"
    return f"SIG{number}"


def _trim(data: bytearray, limit: int) -> bool:
    """Drop bytes from the start until ``data`` fits, at a UTF-8 character boundary."""
    if len(data) <= limit:
        return False
    cut = len(data) - limit
    while cut < len(data) and (data[cut] & 0xC0) == 0x80:  # a continuation byte
        cut += 1
    del data[:cut]
    return True


class _Terminal:
    def __init__(self, child: Child, limit: int) -> None:
        self.child = child
        self.limit = limit
        self.output = bytearray()
        self.truncated = False
        self.exited = anyio.Event()
        self.status: acp.TerminalExitStatus | None = None

    async def pump(self, stream: str) -> None:
        while data := await self.child.read(stream):
            self.output += data
            self.truncated = _trim(self.output, self.limit) or self.truncated

    async def watch(self) -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.pump, "stdout")
            tg.start_soon(self.pump, "stderr")
            code = await self.child.wait()
            # Leftover grandchildren would keep the pipes open and the pumps waiting.
            self.child.kill_leftovers()
        self.status = (
            acp.TerminalExitStatus(signal=_signal_name(-code))
            if code < 0
            else acp.TerminalExitStatus(exit_code=code)
        )
        self.exited.set()


class Terminals:
    """The terminals of one client; every method answers one ``terminal/*`` request."""

    def __init__(
        self,
        policy: TerminalPolicy,
        *,
        files: Callable[[str], ConfinedFileSystem],
        cwd: Callable[[str], str],
        task_group: TaskGroup,
        environment: Mapping[str, str],
    ) -> None:
        self._policy = _adopt(policy)
        self._files = files  # session id -> its confined file system
        self._cwd = cwd  # session id -> its cwd
        self._tg = task_group
        self._environment = dict(environment)
        self._terminals: dict[str, _Terminal] = {}
        self._count = 0

    async def create(self, request: acp.CreateTerminalRequest) -> acp.CreateTerminalResponse:
        cwd = request.cwd or self._cwd(request.session_id)
        if not self._files(request.session_id).contains(cwd):
            raise AccessDenied(f"terminal cwd outside the session's folders: {cwd}", path=cwd)
        argv, line = _command(request)
        asked = {v.name: v.value for v in request.env}
        ask = TerminalRequest(session_id=request.session_id, argv=tuple(argv), cwd=cwd, env=asked)
        if not self._policy(ask):
            names = f" with {', '.join(sorted(asked))}" if asked else ""
            raise AccessDenied(f"command not allowed by the terminal policy: {argv[0]}{names}")
        env = {**self._environment, **asked}
        try:
            child = await Child.spawn(argv if line is None else line, cwd=Path(cwd), env=env)
        except GemwireError as exc:  # a missing program or folder, no resources
            raise AccessDenied(str(exc)) from exc
        await child.close_input()
        self._count += 1
        terminal_id = f"term-{self._count}"
        limit = request.output_byte_limit
        terminal = _Terminal(child, DEFAULT_OUTPUT_BYTE_LIMIT if limit is None else limit)
        self._terminals[terminal_id] = terminal
        self._tg.start_soon(terminal.watch)
        return acp.CreateTerminalResponse(terminal_id=terminal_id)

    def _get(self, terminal_id: str) -> _Terminal:
        terminal = self._terminals.get(terminal_id)
        if terminal is None:
            raise AccessDenied(f"no terminal {terminal_id!r}")
        return terminal

    async def output(self, request: acp.TerminalOutputRequest) -> acp.TerminalOutputResponse:
        terminal = self._get(request.terminal_id)
        return acp.TerminalOutputResponse(
            output=terminal.output.decode(errors="replace"),
            truncated=terminal.truncated,
            exit_status=terminal.status,
        )

    async def wait_for_exit(
        self, request: acp.WaitForTerminalExitRequest
    ) -> acp.WaitForTerminalExitResponse:
        terminal = self._get(request.terminal_id)
        await terminal.exited.wait()
        assert terminal.status is not None
        return acp.WaitForTerminalExitResponse(
            exit_code=terminal.status.exit_code, signal=terminal.status.signal
        )

    async def kill(self, request: acp.KillTerminalRequest) -> None:
        await self._get(request.terminal_id).child.stop()

    async def release(self, request: acp.ReleaseTerminalRequest) -> None:
        terminal = self._get(request.terminal_id)
        del self._terminals[request.terminal_id]
        await _close(terminal)

    async def aclose(self) -> None:
        terminals, self._terminals = self._terminals, {}
        for terminal in terminals.values():
            await _close(terminal)


async def _close(terminal: _Terminal) -> None:
    with anyio.CancelScope(shield=True):
        await terminal.child.stop()
        with anyio.move_on_after(2):  # let the pumps see end of file before the pipes close
            await terminal.exited.wait()
        await terminal.child.aclose()
