"""An isolated Gemini CLI environment: a throwaway home, a workspace, and the env to run in.

    with ScriptedModel(scenario) as model, IsolatedGemini(model.url, files=scenario.files) as env:
        subprocess.run([gemini, "-o", "stream-json"], cwd=env.workspace, env=env.environ(), ...)

Nothing touches the user's ``~/.gemini``: ``GEMINI_CLI_HOME`` (0.30 and newer) and
``HOME`` (older CLIs only know ``os.homedir()``) both point at the temporary home, and every
inherited ``GEMINI_*`` / ``GOOGLE_*`` variable is dropped, so a developer's real key or
settings cannot leak into a test. ``TMPDIR`` points inside the root too: the CLI writes an
error report file there for every failed API call. ``GEMINI_CLI_NO_RELAUNCH=1`` runs the CLI
as one Node process, as gemwire starts it.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Self

import msgspec

from gemwire.runners import GeminiOptions
from gemwire.runners.discovery import version_key
from gemwire.testing.pinned import CURRENT_VERSION, pinned_gemini
from gemwire.testing.scenario import seed_workspace

__all__ = ("DEFAULT_SETTINGS", "FAKE_API_KEY", "Isolated", "IsolatedGemini", "settings_for")

FAKE_API_KEY = "gemwire-fake-key"

DEFAULT_SETTINGS: Mapping[str, Any] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "general": {
        "enableAutoUpdate": False,
        "enableAutoUpdateNotification": False,
        # Session cleanup at startup deletes resumed sessions' files
        # (docs/gemini-cli.md#session-cleanup).
        "sessionRetention": {"enabled": False},
    },
    "telemetry": {"enabled": False},
    "privacy": {"usageStatisticsEnabled": False},
}
"""The settings of an isolated home, in the keys of Gemini CLI 0.30 and newer."""

_BEFORE_0_30: Mapping[str, Any] = {"general": {"disableAutoUpdate": True, "disableUpdateNag": True}}
"""What 0.15 calls ``enableAutoUpdate*``. 0.30 keeps these keys; 0.61 renames them when it
starts, rewriting ``settings.json`` in place, and a CLI starting meanwhile on the same home
reads an empty file (exit 52). So they are written only for the versions that need them."""


def settings_for(version: str) -> dict[str, Any]:
    """`DEFAULT_SETTINGS` in the keys Gemini CLI ``version`` knows, so it has none to rewrite.

    >>> settings_for("0.15.4")["general"]["disableAutoUpdate"]
    True
    >>> "disableAutoUpdate" in settings_for("0.61.0")["general"]
    False
    """
    if version_key(version) < (0, 30, 0):
        return _merge(DEFAULT_SETTINGS, _BEFORE_0_30)
    return _merge(DEFAULT_SETTINGS, {})


# Inherited variables that would change which account, endpoint or home the CLI uses.
_DROPPED_PREFIXES = ("GEMINI_", "GOOGLE_", "CLOUDSDK_", "VERTEX")


def _merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


class Isolated:
    """What every isolated environment has: a root folder holding its home, and the
    processes started there.

    ``root`` is kept afterwards when given (e.g. pytest's ``tmp_path``); by default it is
    a temporary folder removed on `cleanup()`. Either way it is resolved: the agents
    resolve symlinks in the paths they report, and so must we, to recognise them.
    """

    TAG: ClassVar[str]
    """The variable every process of the environment inherits, set to `home`."""

    def __init__(self, root: Path | None) -> None:
        self._owns_root = root is None
        self.root = (Path(tempfile.mkdtemp(prefix="gemwire-")) if root is None else root).resolve()
        self.home = self.root / "home"

    def live_processes(self, settle: float = 5.0) -> list[int]:
        """PIDs of live processes started in this environment.

        Every process of a run inherits `TAG` from `environ()`, grandchildren included,
        so an empty list after a run means nothing was left behind. Zombies are dead and
        not counted (some sandboxes' PID 1 never reaps them). A process killed a moment
        ago may still be exiting on a loaded machine, so while any is found this looks
        again for up to ``settle`` seconds; it returns as soon as none is.

        A process counts too when its parent does: a child that cleared its environment
        or left for a session of its own is found while its parent runs. How, per OS
        (`live_processes`): Linux reads every environment in ``/proc``. macOS asks ``ps
        -E``, which shows the environment of the user's processes except Apple's own
        programs (``/bin/sh``, ``/bin/sleep``: the kernel withholds theirs from every other
        process): Node, Python and the agents are seen, and so is a shell one of them
        started, but not such a program once every tagged process above it has exited. Windows shows no other
        process's environment: there it raises `NotImplementedError` rather than find
        nothing.
        """
        return live_processes(f"{self.TAG}={self.home}", settle)

    def cleanup(self) -> None:
        if self._owns_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.cleanup()


class IsolatedGemini(Isolated):
    """A temporary Gemini home and workspace wired to a (scripted) Gemini API.

    Args:
        base_url: where the CLI sends API calls (``ScriptedModel.url``).
        files: files to seed the workspace with, relative path -> text.
        settings: merged over `DEFAULT_SETTINGS` into the home's ``settings.json``,
            e.g. ``{"general": {"maxAttempts": 1}}``.
        version: the Gemini CLI version that will run here (default: the current pinned
            one); the settings are written in the keys it knows (`settings_for`).
        api_key: the key the CLI presents.
        root: create the home and workspace under this folder (kept afterwards, e.g.
            pytest's ``tmp_path``); by default a temporary folder removed on `cleanup()`.
        workspace_name: the workspace folder's name; Gemini derives the project slug
            from it, so a fixed name keeps recordings stable.
    """

    TAG = "GEMINI_CLI_HOME"

    def __init__(
        self,
        base_url: str,
        *,
        files: Mapping[str, str] | None = None,
        settings: Mapping[str, Any] | None = None,
        api_key: str = FAKE_API_KEY,
        root: Path | None = None,
        workspace_name: str = "workspace",
        version: str = CURRENT_VERSION,
    ) -> None:
        self.base_url = base_url
        self.api_key = api_key
        self.version = version
        super().__init__(root)
        self.workspace = self.root / workspace_name
        self.settings = _merge(settings_for(version), settings or {})
        (self.home / ".gemini").mkdir(parents=True, exist_ok=True)
        self.settings_path.write_text(json.dumps(self.settings, indent=2) + "\n")
        self.workspace.mkdir(parents=True, exist_ok=True)
        self.tmp.mkdir(exist_ok=True)
        seed_workspace(self.workspace, files or {})

    @property
    def gemini_dir(self) -> Path:
        """The ``.gemini`` folder of the isolated home (sessions live under ``tmp/``)."""
        return self.home / ".gemini"

    @property
    def tmp(self) -> Path:
        """The CLI's temporary folder (``TMPDIR``)."""
        return self.root / "tmp"

    @property
    def settings_path(self) -> Path:
        return self.gemini_dir / "settings.json"

    def environ(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment to run the CLI in: the current one, isolated and pointed here."""
        env = {
            key: value for key, value in os.environ.items() if not key.startswith(_DROPPED_PREFIXES)
        }
        env.update(
            HOME=str(self.home),
            GEMINI_CLI_HOME=str(self.home),
            GEMINI_API_KEY=self.api_key,
            GOOGLE_GEMINI_BASE_URL=self.base_url,
            GEMINI_CLI_TRUST_WORKSPACE="true",
            # One Node process, as gemwire starts the CLI (docs/running.md): not the
            # launcher's relaunch, which doubles every start.
            GEMINI_CLI_NO_RELAUNCH="1",
            TMPDIR=str(self.tmp),
        )
        env.update(extra or {})
        return env

    def gemini_options(self, **changes: Any) -> GeminiOptions:
        """`GeminiOptions` that run the pinned CLI of `version` here, in `environ()` alone
        (nothing inherited); ``changes`` override any field."""
        options = GeminiOptions(
            cwd=str(self.workspace),
            env=self.environ(),
            inherit_env=False,
            executable=str(pinned_gemini(self.version)),
        )
        return msgspec.structs.replace(options, **changes)

    def session_files(self) -> list[Path]:
        """Every session file the CLI wrote under this home, sorted by path."""
        tmp = self.gemini_dir / "tmp"
        return sorted(p for p in tmp.glob("*/chats/**/*") if p.is_file())


def live_processes(variable: str, settle: float) -> list[int]:
    """PIDs of live processes whose environment holds ``variable`` (``NAME=value``), looking
    again for up to ``settle`` seconds while any is found (`Isolated.live_processes` says
    how, per OS). Raises `NotImplementedError` where the OS shows no environments."""
    deadline = time.monotonic() + settle
    while (found := _processes(variable)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def _processes(variable: str, platform: str = sys.platform) -> list[int]:
    if platform == "linux":
        return _proc_processes(variable.encode())
    if platform == "darwin":
        with os.popen("LC_ALL=C /bin/ps -A -E -ww -o pid= -o ppid= -o stat= -o command=") as ps:
            return _ps_processes(ps.read(), variable)
    raise NotImplementedError(
        f"live_processes: {platform} shows no other process's environment, so the "
        "processes of an environment cannot be found there"
    )


def _ps_processes(listing: str, variable: str) -> list[int]:
    """The live processes of a ``ps -E -o pid= -o ppid= -o stat= -o command=`` listing
    (macOS: the environment follows the arguments) that hold ``variable`` as a word, and
    their descendants (whose environment the kernel may withhold).

    >>> _ps_processes(
    ...     "  10     1 S    node cli.js HOME=/h TAG=1\\n"
    ...     "  11    10 S    /bin/sh -c sleep 60\\n"
    ...     "  12    11 Z    (sleep)\\n"
    ...     "  13     1 S    node other.js TAG=2\\n",
    ...     "TAG=1",
    ... )
    [10, 11]
    """
    rows = []
    for line in listing.splitlines():
        fields = line.split(None, 3)
        if len(fields) < 3 or not fields[0].isdigit() or fields[2].startswith("Z"):
            continue
        # A space between words; ps escapes what is not printable ASCII (unlike tmp paths).
        tagged = f" {variable} " in f" {fields[3] if len(fields) == 4 else ''} "
        rows.append((int(fields[0]), int(fields[1]), tagged))
    return _with_descendants(rows)


def _with_descendants(rows: list[tuple[int, int, bool]]) -> list[int]:
    """The tagged processes of ``rows`` (pid, parent pid, tagged; zombies left out) and
    every descendant of theirs: a child that cleared its environment (``env -i``) or left
    for a session of its own is still one while its parent runs, and an orphan stays one
    of the Linux launcher, which adopts it (`gemwire._transport.reaper`)."""
    children: dict[int, list[int]] = {}
    found: list[int] = []
    for pid, parent, tagged in rows:
        children.setdefault(parent, []).append(pid)
        if tagged:
            found.append(pid)
    todo = list(found)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.append(child)
                todo.append(child)
    return found


def _proc_processes(marker: bytes) -> list[int]:
    rows = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if fields[0] == "Z":
                continue
            try:
                tagged = marker in (stat.parent / "environ").read_bytes().split(b"\0")
            except PermissionError:
                tagged = False  # not ours to read: a descendant of ours still counts
        except OSError:
            continue  # exited meanwhile
        rows.append((int(stat.parent.name), int(fields[1]), tagged))
    return _with_descendants(rows)
