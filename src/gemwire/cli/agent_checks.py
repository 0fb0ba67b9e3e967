"""``gemwire doctor``'s look at the built-in ACP agents (``gemwire acp --agent NAME``).

One check per agent: is it installed where `resolve_agent` looks, which version (and the
one gemwire tests), and is there a credential it reads: a variable or a login file. A
missing agent is a warning, not a failure: nobody needs every agent. Secrets are never
shown, only where they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from gemwire.cli.checks import Check

__all__ = ("agent_checks",)


def agent_checks(cwd: Path, home: Path, environ: Mapping[str, str]) -> list[Check]:
    from gemwire.errors import AgentNotFound
    from gemwire.runners.agents import AGENTS, resolve_agent

    found: list[Check] = []
    for spec in AGENTS.values():
        name = f"agent {spec.name}"
        try:
            agent = resolve_agent(spec.name, cwd=str(cwd), environ=dict(environ))
        except AgentNotFound:
            found.append(
                Check(
                    name,
                    "warn",
                    f"{spec.title} is not installed",
                    fix=f"npm install -g {spec.package}@{spec.version} (the version gemwire "
                    f"tests), or set {spec.configured_env} to the command that starts it",
                )
            )
            continue
        version = agent.version or "version unknown"
        details = [f"command: {' '.join(agent.command)} (from {agent.source})"]
        if agent.version is not None and agent.version != spec.version:
            details.append(f"gemwire is tested with {spec.version}")
        credentials = [f"${var}" for var in spec.auth_env if environ.get(var)]
        credentials += [f"~/{file}" for file in spec.auth_files if (home / file).is_file()]
        if credentials:
            details.append(f"credentials: {', '.join(credentials)}")
            found.append(Check(name, "ok", f"{spec.title} {version}", details))
            continue
        found.append(
            Check(
                name,
                "warn",
                f"{spec.title} {version}, but no credentials found",
                details,
                fix=f"set {' or '.join(spec.auth_env)}, or sign in once with the agent "
                f"(it keeps the login in ~/{spec.auth_files[0]})",
            )
        )
    return found
