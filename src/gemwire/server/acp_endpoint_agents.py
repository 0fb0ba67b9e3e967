"""Which agent an ACP endpoint connection runs, and how it starts: the agent a request
names (``/acp/{agent}``, ``/acp?agent=``), and the launchers (the built-in agents, or
`gemwire serve`'s)."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qs

from gemwire._normalize.masking import known_secrets
from gemwire.errors import AgentNotFound
from gemwire.runners.acp.channel import AgentChannel
from gemwire.runners.acp.process_channel import AgentLaunch, ProcessChannel
from gemwire.runners.agents import AGENTS, resolve_agent
from gemwire.server.acp_endpoint_asgi import Scope
from gemwire.server.agents import AgentLauncher as ServerLauncher
from gemwire.server.responses import NotFound

__all__ = (
    "AGENT_PARAMETER",
    "DEFAULT_AGENT",
    "AgentLauncher",
    "agent_named",
    "launch_built_in",
    "server_launcher",
)

AgentLauncher = Callable[[str], AgentChannel]
"""The channel of a new agent process by its name; `AgentNotFound` for no such agent."""

AGENT_PARAMETER = "agent"
"""The query parameter naming the agent at ``/acp`` (``/acp?agent=claude``)."""
DEFAULT_AGENT = "gemini"
"""The agent of ``/acp`` when the URL names none."""


def launch_built_in(name: str) -> AgentChannel:
    """A built-in agent (`resolve_agent`: ``gemini``, ``claude``, ...) as a process."""
    resolved = resolve_agent(name)
    launch = AgentLaunch(command=resolved.command, env=dict(AGENTS[resolved.name].env))
    return ProcessChannel(launch, secrets=known_secrets(launch.environment()))


def server_launcher(launcher: ServerLauncher, cwd: str) -> AgentLauncher:
    """The endpoint's launcher over the server's: its agents (``--agent`` ones, an
    environment without the server's token; never a ``--warm`` spare, which a session's
    ``initialize`` primed), each process started in ``cwd``
    (the first root; the client names its session's folder in ``session/new``, which the
    endpoint holds to the roots)."""

    def launch(name: str) -> AgentChannel:
        try:
            return launcher.channel(launcher.options(name, cwd))
        except NotFound as exc:
            raise AgentNotFound(str(exc)) from exc

    return launch


def agent_named(scope: Scope) -> str:
    """The agent a request names: the ``agent`` path parameter (``/acp/{agent}``), else
    the ``agent`` query parameter (``/acp?agent=NAME``), else `DEFAULT_AGENT`."""
    name = scope.get("path_params", {}).get(AGENT_PARAMETER)
    if isinstance(name, str) and name:
        return name
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    return (query.get(AGENT_PARAMETER) or [DEFAULT_AGENT])[-1] or DEFAULT_AGENT
