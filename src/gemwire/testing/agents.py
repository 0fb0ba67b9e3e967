"""Isolated environments for the ACP agents, each wired to the scripted model.

    with ScriptedModel(scenario) as model, isolated_agent("claude", model) as agent:
        async with run_acp("go", agent.acp_options(permissions="edits")) as turn: ...

Like `IsolatedGemini`: a throwaway home (and ``TMPDIR``) and a workspace seeded with the
scenario's files; the agent's own configuration points it at the scripted model (base URL,
a fake key, a model name it knows), with telemetry, update checks and other traffic off.
Every inherited variable that would change the agent's account, endpoint or home is
dropped, so a developer's real keys cannot leak into a test. The agent itself is the
pinned install of its current release (`resolve_agent`), of an older pinned one
(``version``), or another command given as ``command``. gemwire makes each agent ask
before acting (`asking`) whatever its configuration says; Codex's leaves it to gemwire.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from gemwire.runners.acp import AcpOptions
from gemwire.runners.agents import AGENTS, AgentName, AgentRelease, AgentSpec, resolve_agent
from gemwire.testing.environment import FAKE_API_KEY, Isolated, IsolatedGemini
from gemwire.testing.model_server import ScriptedModel
from gemwire.testing.scenario import seed_workspace

__all__ = (
    "SCRIPTED_MODEL_NAME",
    "IsolatedAgent",
    "IsolatedAntigravity",
    "IsolatedClaude",
    "IsolatedCodex",
    "IsolatedOpenCode",
    "IsolatedQwen",
    "isolated_agent",
)

SCRIPTED_MODEL_NAME = "gemwire-scripted"
"""The model name the OpenAI-speaking agents are configured with."""
CODEX_MODEL_NAMES = {"0.16.0": "gpt-5.4-mini", "2.6.0": "gpt-5.5"}
"""A model in each Codex release's catalog: with one it does not list, codex-acp 2.6.0 says
so in the answer and may not offer apply_patch."""

_DROPPED_PREFIXES = (
    "ANTHROPIC_",
    "CLAUDE_",
    "OPENAI_",
    "CODEX_",
    "QWEN_",
    "DASHSCOPE_",
    "OPENCODE",
    "OPENROUTER_",
    "GEMINI_",
    "GOOGLE_",
    "XDG_",
)


class IsolatedAgent(Isolated):
    """A temporary home and workspace for one ACP agent, wired to a scripted model.

    Args:
        model: the scripted model the agent talks to.
        files: files to seed the workspace with, relative path -> text.
        root: create the home and workspace under this folder (kept afterwards, e.g.
            pytest's ``tmp_path``); by default a temporary folder removed on `cleanup()`.
        command: the argv that starts the agent in ACP mode; by default the pinned one.
        version: which pinned release (default: the current one); with ``command``, the
            release that command starts, for its configuration.
    """

    name: AgentName
    TAG = "GEMWIRE_AGENT_HOME"

    def __init__(
        self,
        model: ScriptedModel,
        *,
        files: Mapping[str, str] | None = None,
        root: Path | None = None,
        command: tuple[str, ...] | None = None,
        api_key: str = FAKE_API_KEY,
        version: str | None = None,
    ) -> None:
        self.model = model
        self.api_key = api_key
        self.release = self.spec.release(version) if version else self.spec.current
        # Found before the root is made: an agent that is not installed leaves no folder.
        self.command = command or resolve_agent(self.name, version=version).command
        super().__init__(root)
        self.workspace = self.root / "workspace"
        self.tmp = self.root / "tmp"
        try:
            for folder in (self.home, self.workspace, self.tmp):
                folder.mkdir(parents=True, exist_ok=True)
            seed_workspace(self.workspace, files or {})
            self.configure()
        except BaseException:
            self.cleanup()
            raise

    release: AgentRelease
    """The release it runs."""

    @property
    def spec(self) -> AgentSpec:
        return AGENTS[self.name]

    def configure(self) -> None:
        """Write the agent's configuration files into the home."""

    def agent_environ(self) -> dict[str, str]:
        """The variables that point this agent at the scripted model."""
        return {}

    def environ(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment to run the agent in: the current one, isolated and pointed here."""
        env = {
            key: value for key, value in os.environ.items() if not key.startswith(_DROPPED_PREFIXES)
        }
        env.update(HOME=str(self.home), TMPDIR=str(self.tmp), GEMWIRE_AGENT_HOME=str(self.home))
        env.update(self.agent_environ())
        if self.release is not self.spec.current:
            # gemwire run by name (acp --agent, serve, batch --agent) runs this release too.
            env[self.spec.configured_env] = shlex.join(self.command)
        env.update(extra or {})
        return env

    def acp_options(self, **changes: Any) -> AcpOptions:
        """`AcpOptions` that run this agent here; ``changes`` override any field."""
        options = AcpOptions(
            command=self.command,
            cwd=str(self.workspace),
            env=self.environ(),
            inherit_env=False,
            serve_reads=self.spec.serve_reads,
        )
        return msgspec.structs.replace(options, **changes)


class IsolatedClaude(IsolatedAgent):
    """Claude Code (claude-agent-acp, or claude-code-acp) on the Anthropic Messages API.

    ``IS_SANDBOX=1``: as root, Claude Code refuses the permission mode claude-code-acp
    starts it in unless it is told it runs in a sandbox.
    """

    name = "claude"

    def agent_environ(self) -> dict[str, str]:
        return {
            "ANTHROPIC_BASE_URL": self.model.url,
            "ANTHROPIC_API_KEY": self.api_key,
            "CLAUDE_CONFIG_DIR": str(self.home / ".claude"),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "IS_SANDBOX": "1",
            **self.spec.env,  # as gemwire starts it: the turn saved before its end
        }


class IsolatedCodex(IsolatedAgent):
    """Codex (codex-acp) on the OpenAI Responses API, through a provider in ``config.toml``."""

    name = "codex"

    def configure(self) -> None:
        codex_home = self.home / ".codex"
        codex_home.mkdir(exist_ok=True)
        (codex_home / "config.toml").write_text(
            # A model Codex knows: with an unknown one it tells the user so, as answer text.
            f'model = "{CODEX_MODEL_NAMES[self.release.version]}"\n'
            'model_provider = "gemwire"\n'
            "check_for_update_on_startup = false\n"
            # Codex's Linux sandbox needs bubblewrap and user namespaces, which containers
            # (and CI runners) often lack; the client's permission requests guard instead.
            # No approval_policy: 2.6.0 refuses "untrusted" at start, and gemwire makes
            # every release ask (asking.py).
            'sandbox_mode = "danger-full-access"\n\n'
            "[model_providers.gemwire]\n"
            'name = "gemwire scripted model"\n'
            f'base_url = "{self.model.openai_url}"\n'
            'env_key = "OPENAI_API_KEY"\n'
            'wire_api = "responses"\n'
            "request_max_retries = 0\n"
            "stream_max_retries = 0\n\n"
            "[analytics]\nenabled = false\n"
        )

    def agent_environ(self) -> dict[str, str]:
        return {"CODEX_HOME": str(self.home / ".codex"), "OPENAI_API_KEY": self.api_key}


class IsolatedQwen(IsolatedAgent):
    """Qwen Code on OpenAI Chat Completions (``--auth-type openai`` by settings)."""

    name = "qwen"

    def configure(self) -> None:
        settings = {
            "security": {"auth": {"selectedType": "openai"}},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
            "telemetry": {"enabled": False},
            "privacy": {"usageStatisticsEnabled": False},
            "model": {"name": SCRIPTED_MODEL_NAME},
            # Qwen Code's own default, "auto", runs edits without asking the client.
            "tools": {"approvalMode": "default"},
            # After each turn Qwen Code asks the model, in the background, what to remember.
            "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False},
            # ... and what the user might type next.
            "ui": {"enableFollowupSuggestions": False},
        }
        qwen_home = self.home / ".qwen"
        qwen_home.mkdir(exist_ok=True)
        (qwen_home / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")

    def agent_environ(self) -> dict[str, str]:
        return {
            "OPENAI_BASE_URL": self.model.openai_url,
            "OPENAI_API_KEY": self.api_key,
            "OPENAI_MODEL": SCRIPTED_MODEL_NAME,
        }


class IsolatedOpenCode(IsolatedAgent):
    """OpenCode with an OpenAI-compatible provider in its global ``opencode.json``."""

    name = "opencode"

    def configure(self) -> None:
        config = {
            "$schema": "https://opencode.ai/config.json",
            "autoupdate": False,
            "share": "disabled",
            # OpenCode's own default runs edits and commands without asking the client.
            "permission": {"edit": "ask", "bash": "ask"},
            "model": f"gemwire/{SCRIPTED_MODEL_NAME}",
            "provider": {
                "gemwire": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "gemwire scripted model",
                    "options": {"baseURL": self.model.openai_url, "apiKey": self.api_key},
                    "models": {SCRIPTED_MODEL_NAME: {"name": SCRIPTED_MODEL_NAME}},
                }
            },
        }
        folder = self.home / ".config" / "opencode"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "opencode.json").write_text(json.dumps(config, indent=2) + "\n")
        # Each time it opens a directory (every session's cwd), OpenCode installs
        # @opencode-ai/plugin into each config folder in the background (Npm.install:
        # Arborist, from registry.npmjs.org) unless that folder's node_modules exists and
        # its package-lock.json lists every dependency. In a fresh home that download (26
        # packages) was still running 100 s after a turn, at a fifth of a core, and a new
        # session before it ended starts it again: a shared process never idled, and the
        # tests reached the network. The package serves the user's own plugins, which the
        # tests have none of, so the folder says it is installed.
        dependencies = {"@opencode-ai/plugin": self.release.version}
        (folder / "package.json").write_text(json.dumps({"dependencies": dependencies}) + "\n")
        lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": dependencies}}}
        (folder / "package-lock.json").write_text(json.dumps(lock) + "\n")
        (folder / "node_modules").mkdir(exist_ok=True)

    def agent_environ(self) -> dict[str, str]:
        return {
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
        }


class _IsolatedGeminiAgent(IsolatedAgent):
    """Gemini CLI (``gemini --acp``), through `IsolatedGemini`."""

    name = "gemini"

    def configure(self) -> None:
        self.gemini = IsolatedGemini(self.model.url, root=self.root)

    def agent_environ(self) -> dict[str, str]:
        env = self.gemini.environ()
        return {
            key: env[key] for key in env if key not in os.environ or env[key] != os.environ[key]
        }


class IsolatedAntigravity(IsolatedAgent):
    """Antigravity (``gemwire agent antigravity``) on the Gemini API, configured as Gemini
    CLI is; the model's network tools (``read_url_content``, ``search_web``) off."""

    name = "antigravity"

    def agent_environ(self) -> dict[str, str]:
        return {
            "GEMINI_API_KEY": self.api_key,
            "GOOGLE_GEMINI_BASE_URL": self.model.url,
            "GEMWIRE_ANTIGRAVITY_NETWORK_TOOLS": "0",
        }


_CLASSES: dict[AgentName, type[IsolatedAgent]] = {
    "claude": IsolatedClaude,
    "codex": IsolatedCodex,
    "qwen": IsolatedQwen,
    "opencode": IsolatedOpenCode,
    "gemini": _IsolatedGeminiAgent,
    "antigravity": IsolatedAntigravity,
}


def isolated_agent(
    name: AgentName,
    model: ScriptedModel,
    *,
    files: Mapping[str, str] | None = None,
    root: Path | None = None,
    command: tuple[str, ...] | None = None,
    version: str | None = None,
) -> IsolatedAgent:
    """The isolated environment for agent ``name`` (``gemini`` too, for side-by-side tests),
    of its pinned release ``version`` (default: the current one)."""
    return _CLASSES[name](model, files=files, root=root, command=command, version=version)
