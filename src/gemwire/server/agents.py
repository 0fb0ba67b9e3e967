"""Which agents the server runs, and the seam that starts them (`AgentLauncher`).

The session manager and the ACP endpoint never start a process themselves: they ask the
launcher for an agent's `AcpOptions` (the command that names it, its environment, the
quirks it needs) and for an `AgentChannel` to it. `ProcessLauncher` starts the agent
process (`ProcessChannel`: its own process group, stopped with its whole tree); the unit
tests give a launcher whose channels lead to a scripted agent in the test's process.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Protocol

import msgspec

from gemwire._normalize.masking import Masker, known_secrets
from gemwire.errors import AgentNotFound
from gemwire.runners.acp import AcpOptions, AgentChannel, ProcessChannel
from gemwire.runners.agents import AGENTS, resolve_agent
from gemwire.serve_api import AgentEntry
from gemwire.server.responses import NotFound
from gemwire.server.stream import GEMINI_STREAM

__all__ = ("BUILT_IN_AGENTS", "TOKEN_VARIABLE", "AgentEntry", "AgentLauncher", "ProcessLauncher")

TOKEN_VARIABLE = "GEMWIRE_TOKEN"

BUILT_IN_AGENTS = ("gemini", GEMINI_STREAM, "claude", "codex", "qwen", "opencode")
"""In the order ``GET /v1/agents`` lists them; ``--agent NAME=COMMAND`` ones follow."""


class AgentLauncher(Protocol):
    """Starts agents by name: the seam between the server and agent processes."""

    def agents(self) -> list[AgentEntry]:
        """Every agent the server offers, available or not."""
        ...

    def options(self, name: str, cwd: str) -> AcpOptions:
        """How to run agent ``name`` for a session in ``cwd``; `NotFound` for an agent the
        server does not know or cannot find."""
        ...

    def channel(self, options: AcpOptions) -> AgentChannel:
        """A new, unopened channel to a new agent of ``options`` (`AcpClient` opens it)."""
        ...


class ProcessLauncher:
    """Agent processes: the built-in agents (`resolve_agent`) and ``--agent`` commands."""

    def __init__(
        self,
        custom: Mapping[str, tuple[str, ...]] | None = None,
        *,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.custom = dict(custom or {})
        self._environ = dict(os.environ if environ is None else environ)
        self._masker = Masker(known_secrets(self._environ))

    def agents(self) -> list[AgentEntry]:
        entries: list[AgentEntry] = []
        for name in BUILT_IN_AGENTS:
            if name == GEMINI_STREAM:  # the same Gemini CLI as `gemini`, one run a prompt
                gemini = entries[-1]
                command = [a for a in gemini.command if a != "--acp"]
                entries.append(
                    msgspec.structs.replace(
                        gemini,
                        name=GEMINI_STREAM,
                        title="Gemini CLI (stream-json, one run a prompt)",
                        transport="stream-json",
                        command=[*command, "--output-format", "stream-json"] if command else [],
                    )
                )
                continue
            spec = AGENTS[name]  # type: ignore[index]
            try:
                command = list(resolve_agent(name, environ=self._environ).command)
                available, detail = True, None
            except AgentNotFound as exc:
                command, available, detail = [], False, str(exc)
            entries.append(
                AgentEntry(
                    name=name,
                    title=spec.title,
                    transport="acp",
                    available=available,
                    command=self._masker.data(command),
                    detail=detail,
                )
            )
        entries += [
            AgentEntry(
                name=name,
                title=name,
                transport="acp",
                available=True,
                command=self._masker.data(list(command)),
            )
            for name, command in self.custom.items()
        ]
        return entries

    def options(self, name: str, cwd: str) -> AcpOptions:
        # The agent gets the server's environment but never its token.
        env = {k: v for k, v in self._environ.items() if k != TOKEN_VARIABLE}
        if name in self.custom:
            return AcpOptions(command=self.custom[name], cwd=cwd, env=env, inherit_env=False)
        if name == GEMINI_STREAM:
            raise NotFound(f"{name} is not an ACP agent (use gemini)")
        spec = AGENTS.get(name)  # type: ignore[call-overload]
        if spec is None:
            known = ", ".join(
                [n for n in BUILT_IN_AGENTS if n != GEMINI_STREAM] + list(self.custom)
            )
            raise NotFound(f"unknown agent {name!r}; known: {known}")
        try:
            resolved = resolve_agent(name, cwd=cwd, environ=self._environ)
        except AgentNotFound as exc:
            raise NotFound(str(exc)) from exc
        return AcpOptions(
            command=resolved.command,
            cwd=cwd,
            env={**spec.env, **env},
            inherit_env=False,
            serve_reads=spec.serve_reads,
        )

    def channel(self, options: AcpOptions) -> AgentChannel:
        return ProcessChannel(options.launch, secrets=known_secrets(options.environment()))
