"""Built-in ACP agent names: ``claude``, ``codex``, ``qwen``, ``opencode``, ``gemini``.

    agent = resolve_agent("claude")
    async with run_acp(prompt, AcpOptions(command=agent.command)) as turn: ...

`resolve_agent` turns a name into the command that starts the agent in ACP mode. Order:
a configured command (``$GEMWIRE_AGENT_<NAME>``, e.g. ``GEMWIRE_AGENT_CLAUDE="npx
@zed-industries/claude-code-acp"``) > the pinned install of a gemwire checkout
(``clis/<dir>/``, ``make agents``) > ``node_modules/.bin`` in the folder or a parent > ``$PATH``.
The version comes from the package's ``package.json`` next to the launcher, without starting it.
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path
from typing import Literal

import msgspec

from gemwire.errors import AgentNotFound
from gemwire.runners.discovery import package_version

__all__ = ("AGENTS", "AgentName", "AgentSpec", "ResolvedAgent", "clis_dir", "resolve_agent")

AgentName = Literal["claude", "codex", "qwen", "opencode", "gemini"]


class AgentSpec(msgspec.Struct, frozen=True, kw_only=True):
    """An ACP agent gemwire knows by name, and the version its tests pin."""

    name: AgentName
    title: str
    package: str
    """The npm package that ships it."""
    version: str
    """The version gemwire's offline tests run."""
    pinned_dir: str
    """Its folder under ``clis/`` in a gemwire checkout."""
    executable: str
    """The launcher in ``node_modules/.bin`` (and on ``$PATH``)."""
    args: tuple[str, ...] = ()
    """What starts ACP mode."""
    auth_env: tuple[str, ...] = ()
    """Variables any of which authenticates it (an API key or token)."""
    auth_files: tuple[str, ...] = ()
    """Files under the home that hold a login (any one is enough)."""
    serve_reads: bool = False
    """Offer ``fs/read_text_file``: the agent reads through the client whether or not it
    is offered (`AcpOptions.serve_reads`)."""

    @property
    def configured_env(self) -> str:
        """The variable that configures its command."""
        return f"GEMWIRE_AGENT_{self.name.upper()}"


AGENTS: dict[AgentName, AgentSpec] = {
    spec.name: spec
    for spec in (
        AgentSpec(
            name="claude",
            title="Claude Code (claude-code-acp)",
            package="@zed-industries/claude-code-acp",
            version="0.16.2",
            pinned_dir="claude-code-acp-0.16.2",
            executable="claude-code-acp",
            auth_env=("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"),
            auth_files=(".claude/.credentials.json",),
            # claude-code-acp's Edit reads the file through the client even when the client
            # does not offer fs/read_text_file, and fails without it.
            serve_reads=True,
        ),
        AgentSpec(
            name="codex",
            title="Codex (codex-acp)",
            package="@zed-industries/codex-acp",
            version="0.16.0",
            pinned_dir="codex-acp-0.16.0",
            executable="codex-acp",
            auth_env=("OPENAI_API_KEY", "CODEX_API_KEY"),
            auth_files=(".codex/auth.json",),
        ),
        AgentSpec(
            name="qwen",
            title="Qwen Code",
            package="@qwen-code/qwen-code",
            version="0.24.4",
            pinned_dir="qwen-code-0.24.4",
            executable="qwen",
            args=("--acp",),
            auth_env=("OPENAI_API_KEY", "DASHSCOPE_API_KEY"),
            auth_files=(".qwen/oauth_creds.json",),
        ),
        AgentSpec(
            name="opencode",
            title="OpenCode",
            package="opencode-ai",
            version="1.18.33",
            pinned_dir="opencode-1.18.33",
            executable="opencode",
            args=("acp",),
            auth_env=("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"),
            auth_files=(".local/share/opencode/auth.json",),
        ),
        AgentSpec(
            name="gemini",
            title="Gemini CLI",
            package="@google/gemini-cli",
            version="0.61.0",
            pinned_dir="gemini-0.61.0",
            executable="gemini",
            args=("--acp",),
            auth_env=("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"),
            auth_files=(".gemini/oauth_creds.json",),
        ),
    )
}


class ResolvedAgent(msgspec.Struct, frozen=True, kw_only=True):
    name: AgentName
    command: tuple[str, ...]
    """The argv that starts it in ACP mode."""
    source: str
    """``GEMWIRE_AGENT_<NAME>``, ``pinned``, ``node_modules`` or ``PATH``."""
    version: str | None
    """``None`` when configured, or when no ``package.json`` was found next to it."""


def clis_dir() -> Path:
    """Where a gemwire checkout keeps its pinned agents: ``$GEMWIRE_CLIS_DIR`` or ``<repo>/clis``."""
    configured = os.environ.get("GEMWIRE_CLIS_DIR")
    if configured:
        return Path(configured)
    # A source checkout: <repo>/src/gemwire/runners/agents.py -> <repo>/clis
    return Path(__file__).resolve().parents[3] / "clis"


def resolve_agent(
    name: str, *, cwd: str | None = None, environ: dict[str, str] | None = None
) -> ResolvedAgent:
    """The command that starts agent ``name`` in ACP mode (see the module docs for the order).

    Raises `AgentNotFound` naming the places looked at and how to install it.
    """
    spec = AGENTS.get(name)  # type: ignore[call-overload]
    if spec is None:
        raise AgentNotFound(f"unknown agent {name!r}; known: {', '.join(AGENTS)}")
    env = os.environ if environ is None else environ
    configured = env.get(spec.configured_env, "").strip()
    if configured:
        command = tuple(shlex.split(configured))
        return ResolvedAgent(
            name=spec.name, command=command, source=spec.configured_env, version=None
        )
    start = Path(cwd or os.getcwd()).resolve()
    places = [("pinned", clis_dir() / spec.pinned_dir / "node_modules" / ".bin" / spec.executable)]
    places += [
        ("node_modules", folder / "node_modules" / ".bin" / spec.executable)
        for folder in (start, *start.parents)
    ]
    on_path = shutil.which(spec.executable, path=env.get("PATH"))
    if on_path:
        places.append(("PATH", Path(on_path)))
    for source, launcher in places:
        if launcher.is_file() and os.access(launcher, os.X_OK):
            return ResolvedAgent(
                name=spec.name,
                command=(str(launcher), *spec.args),
                source=source,
                version=package_version(launcher, spec.package),
            )
    raise AgentNotFound(
        f"{spec.title} not found (looked at ${spec.configured_env}, the pinned install, "
        f"node_modules/.bin and $PATH): npm install -g {spec.package}, or set "
        f"{spec.configured_env} to the command that starts it in ACP mode",
        executable=spec.executable,
    )
