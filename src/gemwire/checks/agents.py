"""The built-in ACP agents (``gemwire acp --agent NAME``): installed, version, credentials.

One check per agent: is it installed where `resolve_agent` looks, which version (and the
one gemwire tests), and is there a credential it reads: a variable or a login file. A
missing agent is a warning, not a failure: nobody needs every agent. So is an agent that
will not start here: Claude Code as root with ``IS_SANDBOX`` set to anything but ``1``
(`gemwire.runners.acp.claude_code`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from gemwire.checks.check import Check
from gemwire.errors import AgentNotFound
from gemwire.runners.acp.claude_code import ROOT_FIX, ROOT_REFUSAL, refuses_root
from gemwire.runners.agents import AGENTS, AgentSpec, launched_release, resolve_agent

__all__ = ("check_agents",)


def check_agents(
    cwd: str | os.PathLike[str] | None = None,
    *,
    home: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    uid: int | None = None,
) -> list[Check]:
    """One `Check` per built-in agent, in the order of `AGENTS`, named ``agent NAME``.

    Args:
        cwd: where the agent would be started (``node_modules/.bin`` is looked for from
            there up); default here.
        home: the user's home, where the agents keep their logins; default ``~``.
        environ: the environment the agents would get; default ``os.environ``.
        uid: the user the agents would run as; default this process's effective user.
    """
    where = str(Path(cwd or os.getcwd()))
    logins = Path(home or os.path.expanduser("~"))
    environ = os.environ if environ is None else environ
    return [_agent(spec, where, logins, environ, uid) for spec in AGENTS.values()]


def _agent(
    spec: AgentSpec, cwd: str, home: Path, environ: Mapping[str, str], uid: int | None
) -> Check:
    name = f"agent {spec.name}"
    if spec.name == "antigravity":
        return _antigravity(spec, environ)
    try:
        agent = resolve_agent(spec.name, cwd=cwd, environ=dict(environ))
    except AgentNotFound:
        return Check(
            name=name,
            status="warn",
            summary=f"{spec.title} is not installed",
            fix=f"npm install -g {spec.package}@{spec.version} (the version gemwire "
            f"tests), or set {spec.configured_env} to the command that starts it",
        )
    version = agent.version or "version unknown"
    details = [f"command: {' '.join(agent.command)} (from {agent.source})"]
    release = launched_release(agent.command)
    if release is not None and release is not spec.current:
        details.append(
            f"{release.package} is its older package: the current one is {spec.package} "
            f"(npm install -g {spec.package}@{spec.version})"
        )
    tested = [r.version for r in spec.releases]
    if agent.version is not None and agent.version not in tested:
        details.append(f"gemwire is tested with {' and '.join(tested)}")
    if spec.name == "claude" and refuses_root(environ, uid=uid):
        sandbox = environ.get("IS_SANDBOX", "")
        return Check(
            name=name,
            status="warn",
            summary=f"{spec.title} {version} will not start: root, IS_SANDBOX={sandbox!r}",
            details=(*details, ROOT_REFUSAL),
            fix=ROOT_FIX,
        )
    credentials = [f"${var}" for var in spec.auth_env if environ.get(var)]
    credentials += [f"~/{file}" for file in spec.auth_files if (home / file).is_file()]
    if credentials:
        details.append(f"credentials: {', '.join(credentials)}")
        return Check(
            name=name, status="ok", summary=f"{spec.title} {version}", details=tuple(details)
        )
    return Check(
        name=name,
        status="warn",
        summary=f"{spec.title} {version}, but no credentials found",
        details=tuple(details),
        fix=f"set {' or '.join(spec.auth_env)}, or sign in once with the agent "
        f"(it keeps the login in ~/{spec.auth_files[0]})",
    )


def _antigravity(spec: AgentSpec, environ: Mapping[str, str]) -> Check:
    """gemwire's own adapter: the extra's SDK and the harness in its wheel, and a key.

    Read from the installed files: importing the SDK takes seconds.
    """
    from importlib.metadata import PackageNotFoundError, distribution

    name = f"agent {spec.name}"
    fix = f"pip install 'gemwire[antigravity]' (google-antigravity {spec.version})"
    try:
        sdk = distribution(spec.package)
    except PackageNotFoundError:
        return Check(name=name, status="warn", summary=f"{spec.title} is not installed", fix=fix)
    installed = sdk.version
    harness = Path(str(sdk.locate_file("google/antigravity/bin/localharness")))
    if not harness.is_file():
        return Check(
            name=name,
            status="warn",
            summary=f"google-antigravity {installed} has no harness for this platform",
            details=(f"looked for {harness}",),
            fix="the SDK's wheel bundles localharness for Linux x86-64 only",
        )
    details = [f"harness: {harness} (google-antigravity {installed})"]
    if installed != spec.version:
        details.append(f"gemwire is tested with {spec.version}")
    credentials = [f"${var}" for var in spec.auth_env if environ.get(var)]
    if not credentials:
        return Check(
            name=name,
            status="warn",
            summary=f"{spec.title}, google-antigravity {installed}, but no API key",
            details=tuple(details),
            fix=f"set {' or '.join(spec.auth_env)} (and GOOGLE_GEMINI_BASE_URL for another "
            "endpoint), as for Gemini CLI",
        )
    details.append(f"credentials: {', '.join(credentials)}")
    return Check(
        name=name,
        status="ok",
        summary=f"{spec.title}, google-antigravity {installed}",
        details=tuple(details),
    )
