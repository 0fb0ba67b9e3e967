"""``gemwire eval --sandbox`` for ACP agents: one agent process an attempt, in its sandbox.

    async with sandboxing, SandboxedAcp(gemini_acp_options(gemini), sandboxing) as executor:
        outcome = await executor.run(task, workspace, on_event)

Unsandboxed, one ACP agent serves many attempts and gemwire serves its file reads, writes
and terminals on the host. Sandboxed, each attempt starts its own agent inside the
attempt's sandbox (`Sandboxing.agent_command`: the workspace the only writable folder, a
fresh home, the hidden tests and the output folder out of sight, the model's port relayed),
and the client offers neither ``fs/*`` nor ``terminal/*``: the agent reads, writes and runs
commands with its own tools, inside. Its permission requests are still answered by the
task's preset, and the agent is still made to ask (asking.py): the launch is the one the
agent would have unsandboxed, wrapped, so gemwire knows the agent it starts.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Self

import msgspec

from gemwire._normalize.masking import known_secrets
from gemwire.batch._acp import AcpExecutor, Connect
from gemwire.batch._sandboxed import Sandboxing
from gemwire.batch.results import Outcome
from gemwire.batch.tasks import Task
from gemwire.events import Event
from gemwire.runners.acp import AcpClient, AcpOptions, PermissionHandler, ProcessChannel
from gemwire.runners.agents import AGENTS, agent_identity

__all__ = ("SandboxedAcp",)


class SandboxedAcp:
    """ACP agents by name, a sandboxed process an attempt (`AcpExecutor`'s, of one)."""

    def __init__(self, options: AcpOptions, sandboxing: Sandboxing) -> None:
        # Nothing served on the host: the agent's own tools work inside the sandbox.
        self._options = msgspec.structs.replace(options, serve_reads=False, serve_writes=False)
        self._sandboxing = sandboxing

    def agent_of(self, task: Task) -> str:
        name = task.agent
        if name is None:  # a configured agent: ``options``' command
            return agent_identity(self._options.command)
        assert name in AGENTS  # else eval names each ACP attempt's agent, a built-in one
        return agent_identity((AGENTS[name].executable,))

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        pass

    async def run(self, task: Task, cwd: str, on_event: Callable[[Event], None]) -> Outcome:
        sandboxing = self._sandboxing
        async with sandboxing.attempt() as private, sandboxing.model_socket(private):
            connect = self._confined(cwd, private)
            async with self._executor(connect) as executor:
                return await executor.run(task, cwd, on_event)

    def _executor(self, connect: Connect) -> AcpExecutor:
        return AcpExecutor(
            self._options,
            agent=None,
            agents=1,
            sessions_per_agent=1,
            concurrency=1,
            connect=connect,
        )

    def _confined(self, workspace: str, private: Path) -> Connect:
        def connect(options: AcpOptions, handler: PermissionHandler) -> AcpClient:
            launch = options.launch  # made to ask as it would be unsandboxed
            # Gemini CLI finds its home by this variable first: the private one.
            env = {**launch.env, "GEMINI_CLI_HOME": str(private / "home")}
            command = self._sandboxing.agent_command(launch.command, workspace, private)
            launch = msgspec.structs.replace(launch, command=tuple(command), env=env)
            channel = ProcessChannel(launch, secrets=known_secrets(launch.environment()))
            return AcpClient(options, channel=channel, permission_handler=handler)

        return connect
