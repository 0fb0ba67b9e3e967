"""``gemwire eval --sandbox``: every attempt's agent, and its verifier, run in a `Sandbox`.

    sandboxing = Sandboxing(Bubblewrap.found(), gemini, hidden=(out, *verify_files))
    async with sandboxing, SandboxedGemini(gemini, sandboxing) as executor:
        ...                                  # the batch engine runs attempts through it
        grade = await verify(task, ws, confine=sandboxing.verifier(ws))

Each attempt has a private folder under one root made for the run (hidden from every
attempt): a fresh home holding a copy of the configured home's ``.gemini/*`` files, and
of the other agents' (`SETTINGS_FOLDERS`: their settings and credentials, not their
sessions; the originals are hidden), the Unix socket that carries the model's port,
and the script that starts Gemini CLI in the sandbox (gemwire runs it as the CLI: the
runner's session following, locks and timeouts work as they do unsandboxed, on the home's
host path). The model must be served on this machine's loopback, where the sandbox can
reach it through the socket and reach nothing else.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Self
from urllib.parse import urlsplit

import anyio
import msgspec
from anyio.abc import SocketStream

from gemwire.batch._process import ProcessExecutor
from gemwire.batch.sandbox import Confinement, Sandbox
from gemwire.batch.tasks import Task
from gemwire.errors import InvalidOptions
from gemwire.events import Event
from gemwire.runners import GeminiOptions, RunResult, find_gemini

__all__ = ("BASE_URLS", "SandboxedGemini", "Sandboxing", "model_endpoint")

SETTINGS_FOLDERS = (".gemini", ".qwen", ".claude", ".codex")
"""The folders of a home whose top files (settings, credentials; not sessions) each
attempt's fresh home gets a copy of; the originals are hidden."""
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
BASE_URLS = ("GOOGLE_GEMINI_BASE_URL", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")
"""Where Gemini CLI, the OpenAI-compatible agents (Qwen Code) and Claude find the model."""


def model_endpoint(gemini: GeminiOptions) -> tuple[str, int]:
    """The host and port of the model the agents are pointed at (`BASE_URLS`), if it is on
    this machine's loopback over plain HTTP: the one place a sandboxed attempt may connect
    to. One port is carried into a sandbox, so every base URL set must name the same."""
    env = {**(os.environ if gemini.inherit_env else {}), **gemini.env}
    named = {name: env[name] for name in BASE_URLS if env.get(name)}
    if not named:
        raise InvalidOptions(
            f"--sandbox lets an attempt reach only a model served on this machine's loopback, "
            f"as {BASE_URLS[0]}=http://127.0.0.1:PORT (or {', '.join(BASE_URLS[1:])}); "
            "none is set"
        )
    endpoints = {_loopback(name, url) for name, url in named.items()}
    if len(endpoints) > 1:
        raise InvalidOptions(
            f"--sandbox carries one model port into a sandbox; {', '.join(named)} name "
            "different ones"
        )
    return endpoints.pop()


def _loopback(name: str, url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    if parts.scheme != "http" or parts.hostname not in _LOOPBACK or parts.port is None:
        raise InvalidOptions(
            f"--sandbox lets an attempt reach only a model served on this machine's loopback, "
            f"as {name}=http://127.0.0.1:PORT; it is {url}"
        )
    if parts.port < 1024:  # the sandbox, with no capabilities, cannot serve it inside
        raise InvalidOptions(f"--sandbox needs the model on a port from 1024 up; {url} is not")
    return ("::1" if parts.hostname == "::1" else "127.0.0.1"), parts.port


class Sandboxing:
    """The run's sandbox, the folders no attempt may see, and the attempts' private folders."""

    def __init__(self, sandbox: Sandbox, gemini: GeminiOptions, *, hidden: Sequence[str]) -> None:
        self._sandbox = sandbox
        self._model = model_endpoint(gemini)
        env = {**(os.environ if gemini.inherit_env else {}), **gemini.env}
        home = gemini.gemini_home or env.get("GEMINI_CLI_HOME") or os.path.expanduser("~")
        self._home = os.path.abspath(home)
        # Its agents' settings alone: the rest of a user's home holds the tools the agent
        # runs on. Absolute, as bwrap needs them (a task made in code may name a relative folder).
        settings = (str(Path(self._home, name)) for name in SETTINGS_FOLDERS)
        self._hidden = (*map(os.path.abspath, hidden), *settings)
        self._root = ""
        self._count = 0

    async def __aenter__(self) -> Self:
        # Each attempt's model socket is in it, and a Unix socket's path has at most 107
        # bytes: a long $TMPDIR (an isolated agent's) would leave no room for it.
        folder = tempfile.gettempdir()
        self._root = tempfile.mkdtemp(
            prefix="gemwire-sandbox-", dir=folder if len(folder) < 48 else "/tmp"
        )
        self._hidden = (*self._hidden, self._root)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await anyio.to_thread.run_sync(shutil.rmtree, self._root, True)

    @asynccontextmanager
    async def attempt(self) -> AsyncGenerator[Path]:
        """A private folder for one attempt (its home in ``home/``), removed afterwards."""
        self._count += 1
        private = Path(self._root, str(self._count))
        await anyio.to_thread.run_sync(self._make, private)
        try:
            yield private
        finally:
            await anyio.to_thread.run_sync(shutil.rmtree, private, True)

    def _make(self, private: Path) -> None:
        for name in SETTINGS_FOLDERS:
            settings = private / "home" / name
            settings.mkdir(parents=True)
            source = Path(self._home, name)
            for file in source.iterdir() if source.is_dir() else ():
                if file.is_file() and not file.is_symlink():
                    shutil.copyfile(file, settings / file.name)

    @asynccontextmanager
    async def model_socket(self, private: Path) -> AsyncGenerator[str]:
        """The Unix socket in ``private`` that carries each connection to the model."""
        path = str(private / "model.sock")
        host, port = self._model
        listener = await anyio.create_unix_listener(path)

        async def carry(client: SocketStream) -> None:
            async with client:
                try:
                    upstream = await anyio.connect_tcp(host, port)
                except OSError:
                    return
                async with upstream, anyio.create_task_group() as group:
                    group.start_soon(_pump, client, upstream)
                    group.start_soon(_pump, upstream, client)

        async with listener, anyio.create_task_group() as group:
            group.start_soon(listener.serve, carry)
            yield path
            group.cancel_scope.cancel()

    def agent_command(self, argv: Sequence[str], workspace: str, private: Path) -> list[str]:
        return self._sandbox.command(
            argv,
            Confinement(
                workspace=workspace,
                home=str(private / "home"),
                hidden=self._hidden,
                model_port=self._model[1],
                model_socket=str(private / "model.sock"),
            ),
        )

    def verifier(self, workspace: str) -> Callable[[Sequence[str], str], list[str]]:
        """How `verify` runs a verifier for ``workspace``: confined, with no network, a
        fresh home, and its reward folder writable."""

        def command(argv: Sequence[str], reward_folder: str) -> list[str]:
            home = Path(reward_folder, "home")
            home.mkdir(exist_ok=True)
            confinement = Confinement(
                workspace=workspace, home=str(home), hidden=self._hidden, writable=(reward_folder,)
            )
            return self._sandbox.command(argv, confinement)

        return command


class SandboxedGemini:
    """Gemini CLI over stream-json, one sandboxed process an attempt (`ProcessExecutor`'s)."""

    def __init__(self, base: GeminiOptions, sandboxing: Sandboxing) -> None:
        self._base = base
        self._sandboxing = sandboxing
        self._argv: tuple[str, ...] = ()

    def agent_of(self, task: Task) -> str:
        return "gemini"

    async def __aenter__(self) -> Self:
        found = await anyio.to_thread.run_sync(find_gemini, self._base.executable)
        self._argv = found.argv
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        pass

    async def run(self, task: Task, cwd: str, on_event: Callable[[Event], None]) -> RunResult:
        sandboxing = self._sandboxing
        async with sandboxing.attempt() as private, sandboxing.model_socket(private):
            script = private / "gemini"
            command = sandboxing.agent_command(self._argv, cwd, private)
            script.write_text(f'#!/bin/sh\nexec {shlex.join(command)} "$@"\n')
            script.chmod(0o700)
            options = msgspec.structs.replace(
                self._base, executable=str(script), gemini_home=str(private / "home")
            )
            return await ProcessExecutor(options).run(task, cwd, on_event)


async def _pump(source: SocketStream, sink: SocketStream) -> None:
    try:
        async for data in source:
            await sink.send(data)
        await sink.send_eof()
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass  # one side went away; leaving the group closes the other
