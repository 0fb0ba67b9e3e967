"""A run's own Gemini home: the user's, with MCP servers added to its settings.

Gemini CLI 0.61.0 reads MCP servers only from settings files
(docs/gemini-cli.md#mcp-servers-for-a-run). Of those, the two a run can point elsewhere
(``GEMINI_CLI_SYSTEM_SETTINGS_PATH``, ``GEMINI_CLI_SYSTEM_DEFAULTS_PATH``) are skipped unless
root owns them, and the workspace's is the project's. So a run given servers gets a home of its
own for ``GEMINI_CLI_HOME``: its ``.gemini/settings.json`` is the user's with the servers merged
in, and every other entry of the user's ``.gemini`` is a symlink to it, so sessions, credentials
and trusted folders are the user's. When the run ends, what the CLI wrote there in place of a
link (``projects.json`` is replaced, never written through) goes back to the user's home, and
the run's home is removed. The user's ``settings.json`` is never written.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec

from gemwire.errors import GemwireError, InvalidOptions
from gemwire.runners.gemini_options import McpServer
from gemwire.wire import acp

__all__ = ("RunHome", "servers_from_settings", "settings_servers")

_MADE_BY_EVERY_RUN = ("tmp", "history")
"""Folders the CLI writes into at every run: made in the user's home first, so that the run's
home links to them and the sessions land in the user's home."""

_REGISTRY = "projects.json"


def settings_servers(servers: Sequence[McpServer], cwd: str) -> dict[str, dict[str, Any]]:
    """``mcpServers`` as Gemini CLI 0.61.0 reads them, mapped as its own ACP agent maps a
    ``session/new``'s servers (``newSessionConfig``): a stdio server runs in ``cwd``, an
    HTTP server is an ``httpUrl``, an SSE server a ``url``.

    >>> stdio = acp.McpServerStdio(name="t", command="tiny", args=["a"],
    ...                            env=[acp.EnvVariable(name="K", value="v")])
    >>> http = acp.McpServerHttp(name="h", url="http://x/mcp")
    >>> for name, server in settings_servers([stdio, http], "/w").items():
    ...     print(name, server)
    t {'command': 'tiny', 'args': ['a'], 'env': {'K': 'v'}, 'cwd': '/w'}
    h {'httpUrl': 'http://x/mcp', 'headers': {}}
    """
    mapped: dict[str, dict[str, Any]] = {}
    for server in servers:
        if isinstance(server, acp.McpServerStdio):
            env = {variable.name: variable.value for variable in server.env}
            mapped[server.name] = {
                "command": server.command,
                "args": list(server.args),
                "env": env,
                "cwd": cwd,
            }
        else:
            headers = {header.name: header.value for header in server.headers}
            url = "httpUrl" if isinstance(server, acp.McpServerHttp) else "url"
            mapped[server.name] = {url: server.url, "headers": headers}
    return mapped


class _SettingsServer(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The part of a ``mcpServers`` entry an ACP `McpServer` can say."""

    command: str | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    url: str | None = None
    http_url: str | None = msgspec.field(default=None, name="httpUrl")
    type: Literal["http", "sse"] | None = None
    headers: dict[str, str] = {}


_SETTINGS_SERVERS = msgspec.json.Decoder(dict[str, msgspec.Raw])
_SETTINGS_SERVER = msgspec.json.Decoder(_SettingsServer)


def servers_from_settings(data: bytes) -> tuple[McpServer, ...]:
    """MCP servers written as Gemini CLI's ``settings.json`` holds them under ``mcpServers``
    (a JSON object: each server by its name), as `GeminiOptions.mcp_servers` takes them: the
    inverse of `settings_servers`. What a server's entry may hold is what that maps: a
    ``command`` with ``args`` and ``env``, or an ``httpUrl``, or a ``url`` (SSE, or HTTP with
    ``type``) with ``headers``. Raises `InvalidOptions` for anything else.

    >>> stdio, http = servers_from_settings(
    ...     b'{"t": {"command": "tiny", "env": {"K": "v"}}, "h": {"httpUrl": "http://x/mcp"}}'
    ... )
    >>> stdio
    McpServerStdio(name='t', command='tiny', env=[EnvVariable(name='K', value='v')])
    >>> http
    McpServerHttp(name='h', url='http://x/mcp')
    >>> servers_from_settings(b'{"t": {"command": "tiny", "trust": true}}')
    Traceback (most recent call last):
    ...
    gemwire.errors.InvalidOptions: server 't': Object contains unknown field `trust` (one takes command, args and env, or httpUrl, or url, type and headers here; put the others in settings.json)
    """
    try:
        entries = _SETTINGS_SERVERS.decode(data)
    except msgspec.DecodeError as exc:
        raise InvalidOptions(f"not a JSON object of MCP servers by name: {exc}") from exc
    servers: list[McpServer] = []
    for name, text in entries.items():
        try:
            entry = _SETTINGS_SERVER.decode(text)
        except msgspec.DecodeError as exc:
            raise InvalidOptions(
                f"server {name!r}: {exc} (one takes command, args and env, or httpUrl, or "
                "url, type and headers here; put the others in settings.json)"
            ) from exc
        given = [entry.command, entry.http_url, entry.url]
        if sum(value is not None for value in given) != 1:
            raise InvalidOptions(f"server {name!r}: give it one of command, httpUrl and url")
        if entry.command is not None:
            env = [acp.EnvVariable(name=key, value=value) for key, value in entry.env.items()]
            servers.append(
                acp.McpServerStdio(name=name, command=entry.command, args=entry.args, env=env)
            )
            continue
        headers = [acp.HttpHeader(name=key, value=value) for key, value in entry.headers.items()]
        if entry.http_url is not None or entry.type == "http":
            url = entry.http_url or entry.url or ""
            servers.append(acp.McpServerHttp(name=name, url=url, headers=headers))
        else:
            servers.append(acp.McpServerSse(name=name, url=entry.url or "", headers=headers))
    return tuple(servers)


class RunHome:
    """The home one run sees (`path`); `close` brings back what the CLI wrote and removes it.

    >>> import tempfile, pathlib
    >>> user = pathlib.Path(tempfile.mkdtemp()) / "home"
    >>> server = acp.McpServerHttp(name="h", url="http://x/mcp")
    >>> home = RunHome(user, {"h": settings_servers([server], "/w")["h"]})
    >>> json.loads((home.path / ".gemini" / "settings.json").read_text())["mcpServers"]
    {'h': {'httpUrl': 'http://x/mcp', 'headers': {}}}
    >>> (home.path / ".gemini" / "tmp").resolve() == (user / ".gemini" / "tmp").resolve()
    True
    >>> home.close(); home.path.exists(), (user / ".gemini" / "settings.json").exists()
    (False, False)
    """

    def __init__(self, user_home: Path, servers: dict[str, dict[str, Any]]) -> None:
        self._user = user_home / ".gemini"
        settings = self._user_settings()
        merged_servers = settings.get("mcpServers")
        settings["mcpServers"] = {
            **(merged_servers if isinstance(merged_servers, dict) else {}),
            **servers,
        }
        self.path = Path(tempfile.mkdtemp(prefix="gemwire-home-"))
        self._own = self.path / ".gemini"
        try:
            for folder in _MADE_BY_EVERY_RUN:
                (self._user / folder).mkdir(parents=True, exist_ok=True)
            self._own.mkdir()
            for entry in self._user.iterdir():
                if entry.name != "settings.json":
                    (self._own / entry.name).symlink_to(entry)
            for name in (".env", ".agents"):  # read from the home itself, not its .gemini
                if (user_home / name).exists():
                    (self.path / name).symlink_to(user_home / name)
            (self._own / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")
        except OSError as exc:  # e.g. Windows without the right to make symlinks
            shutil.rmtree(self.path, ignore_errors=True)
            raise GemwireError(
                f"cannot make the run's own Gemini home for its MCP servers: {exc}"
            ) from exc

    def _user_settings(self) -> dict[str, Any]:
        path = self._user / "settings.json"
        try:
            text = path.read_text()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise InvalidOptions(
                f"cannot read {path} to add the run's MCP servers to it: {exc}"
            ) from exc
        try:
            settings = json.loads(text)
        except ValueError as exc:
            raise InvalidOptions(
                f"{path} is not plain JSON ({exc}), so the run's MCP servers cannot be "
                "merged into a copy of it; remove its comments"
            ) from exc
        if not isinstance(settings, dict):
            raise InvalidOptions(
                f"{path} is not a JSON object, so the run's MCP servers cannot be merged into it"
            )
        return settings

    def close(self) -> None:
        """Move back what the CLI created or replaced (merging ``projects.json``), then
        remove the run's home. Never raises: what cannot be moved goes with the run's home
        (the CLI writes it again when it needs it: an id, a registry entry)."""
        try:
            entries = list(self._own.iterdir())
        except OSError:
            entries = []
        for entry in entries:
            if entry.is_symlink() or entry.name == "settings.json":
                continue
            if entry.name.endswith((".tmp", ".lock")):
                continue  # a write or a lock the CLI left unfinished
            target = self._user / entry.name
            try:
                if entry.name == _REGISTRY and target.is_file():
                    _merge_registry(entry, target)
                else:
                    _replace(entry, target)
            except OSError:
                continue
        shutil.rmtree(self.path, ignore_errors=True)


def _replace(entry: Path, target: Path) -> None:
    """A file the CLI replaced is the newer one; a folder that appeared in the user's home
    meanwhile (another run made it) is kept as it is."""
    if target.is_dir():
        return
    shutil.move(entry, target)


def _merge_registry(ours: Path, theirs: Path) -> None:
    """Add the projects this run registered to the user's registry (other runs may have
    registered theirs meanwhile), written the way the CLI writes it: whole, then renamed."""
    try:
        added = json.loads(ours.read_text()).get("projects")
        registry = json.loads(theirs.read_text())
        projects = registry.setdefault("projects", {})
    except (ValueError, AttributeError):
        return  # one of them is not a registry: the user's stays as it is
    if not isinstance(added, dict) or not isinstance(projects, dict):
        return
    projects.update({k: v for k, v in added.items() if k not in projects})
    fresh = theirs.with_name(f"{theirs.name}.{os.getpid()}.gemwire.tmp")
    fresh.write_text(json.dumps(registry, indent=2))
    os.replace(fresh, theirs)
