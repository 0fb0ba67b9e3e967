"""What ``gemwire doctor`` checks: each check reads files and the environment and says ok,
warn or fail, with the fix.

The rules follow Gemini CLI 0.61.0's own code (research/gemini-protocol.md §3.6, §3.7, §5.5):
``getAuthTypeFromEnv`` / ``validateAuthMethod`` for auth, ``checkPathTrust`` for folder
trust, ``general.sessionRetention`` for the session cleanup. Secrets are never shown: only
the names of the variables and files they are in.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

__all__ = (
    "Check",
    "auth",
    "config_file",
    "env_file",
    "gemini_cli",
    "gemini_home",
    "node",
    "node_version",
    "read_settings",
    "retention",
    "strip_json_comments",
    "trust",
)

Status = Literal["ok", "warn", "fail"]


@dataclass(frozen=True)
class Check:
    """One finding: what was checked, how it stands, the details, and how to fix it."""

    name: str
    status: Status
    summary: str
    details: list[str] = field(default_factory=list)
    fix: str | None = None


def strip_json_comments(text: str) -> str:
    """JSON with ``//`` and ``/* */`` comments (as Gemini's settings files allow) -> JSON.

    >>> strip_json_comments('{"a": "//not a comment", /* note */ "b": 1} // end')
    '{"a": "//not a comment",  "b": 1} '
    """
    out: list[str] = []
    i, n = 0, len(text)
    in_string = False
    while i < n:
        char = text[i]
        if in_string:
            out.append(char)
            if char == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
            out.append(char)
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end == -1 else end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end == -1 else end + 2
            continue
        else:
            out.append(char)
        i += 1
    return "".join(out)


def read_settings(path: Path) -> tuple[dict[str, Any], str | None]:
    """A Gemini settings file (``{}`` when absent) and the problem reading it, if any."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        return {}, f"cannot read {path}: {exc.strerror}"
    try:
        data = json.loads(strip_json_comments(text)) if text.strip() else {}
    except ValueError as exc:
        return {}, f"{path} is not valid JSON: {exc}"
    if not isinstance(data, dict):
        return {}, f"{path} is not a JSON object"
    return data, None


def _get(settings: Mapping[str, Any], dotted: str) -> Any:
    value: Any = settings
    for part in dotted.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def _merged(home: Path, cwd: Path, dotted: str) -> tuple[Any, Path | None]:
    """A setting as Gemini merges them (workspace over user), and the file it came from."""
    for path in (cwd / ".gemini" / "settings.json", home / ".gemini" / "settings.json"):
        value = _get(read_settings(path)[0], dotted)
        if value is not None:
            return value, path
    return None, None


def gemini_home(home: Path, source: str) -> Check:
    """The home whose ``.gemini`` folder the runs use, and whether its settings load."""
    folder = home / ".gemini"
    if not folder.is_dir():
        return Check(
            "Gemini home",
            "warn",
            f"{home} (from {source}) has no .gemini folder yet",
            fix="run `gemini` there once (interactively), or set GEMINI_API_KEY; "
            "the first run creates it",
        )
    _, problem = read_settings(folder / "settings.json")
    if problem:
        return Check(
            "Gemini home",
            "fail",
            f"{home} (from {source}): its settings.json does not load",
            [problem],
            fix="fix the JSON of settings.json (Gemini CLI exits 52 on it)",
        )
    return Check("Gemini home", "ok", f"{home} (from {source})")


def env_file(cwd: Path, home: Path) -> Path | None:
    """The ``.env`` file Gemini CLI loads (``findEnvFile``): the first of ``.gemini/.env``
    and ``.env`` from the workspace up, then in the home."""
    folder = cwd
    while True:
        for candidate in (folder / ".gemini" / ".env", folder / ".env"):
            if candidate.is_file():
                return candidate
        if folder.parent == folder or folder == home:
            break
        folder = folder.parent
    for candidate in (home / ".gemini" / ".env", home / ".env"):
        if candidate.is_file():
            return candidate
    return None


_ENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")


def _env_file_values(path: Path | None) -> dict[str, str]:
    """The variables a .env file sets (kept in memory to decide, never shown)."""
    if path is None:
        return {}
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return {}
    return {
        match.group(1): match.group(2).strip().strip("'\"")
        for line in lines
        if (match := _ENV_LINE.match(line))
    }


def auth(home: Path, cwd: Path, environ: Mapping[str, str]) -> Check:
    """Which auth method headless runs will use, and whether what it needs is there."""
    dotenv = env_file(cwd, home)
    from_file = _env_file_values(dotenv)
    merged = {**from_file, **environ}  # a .env file never overrides the environment

    def where(name: str) -> str | None:
        if environ.get(name):
            return "the environment"
        return str(dotenv) if from_file.get(name) else None

    def flag(name: str) -> bool:
        return merged.get(name) == "true"

    configured, settings_file = _merged(home, cwd, "security.auth.selectedType")
    if isinstance(configured, str) and configured:
        method, source = configured, f"security.auth.selectedType in {settings_file}"
    elif flag("GOOGLE_GENAI_USE_GCA"):
        method, source = "oauth-personal", "GOOGLE_GENAI_USE_GCA=true"
    elif flag("GOOGLE_GENAI_USE_VERTEXAI"):
        method, source = "vertex-ai", "GOOGLE_GENAI_USE_VERTEXAI=true"
    elif where("GOOGLE_GEMINI_BASE_URL"):
        method, source = "gateway", "GOOGLE_GEMINI_BASE_URL"
    elif where("GEMINI_API_KEY"):
        method, source = "gemini-api-key", "GEMINI_API_KEY"
    else:
        return Check(
            "auth",
            "fail",
            "no auth method: headless runs exit 41",
            fix="export GEMINI_API_KEY=... (or put it in ~/.gemini/.env), or sign in once with "
            "`gemini` and pick 'Login with Google'",
        )
    summary = f"{method} (from {source})"
    if method == "gemini-api-key":
        found = where("GEMINI_API_KEY")
        if found is None:
            return Check(
                "auth",
                "warn",
                summary + "; GEMINI_API_KEY is not set",
                ["unless a key was saved in the system keychain by `gemini`, runs exit 41"],
                fix="export GEMINI_API_KEY=... or put it in ~/.gemini/.env",
            )
        return Check("auth", "ok", summary, [f"GEMINI_API_KEY is set in {found}"])
    if method == "oauth-personal":
        creds = home / ".gemini" / "oauth_creds.json"
        if not creds.is_file():
            return Check(
                "auth",
                "fail",
                summary + f"; no saved login ({creds})",
                fix="run `gemini` once interactively and sign in; headless runs cannot open a "
                "browser",
            )
        return Check("auth", "ok", summary, [f"saved login: {creds}"])
    if method == "vertex-ai":
        project = where("GOOGLE_CLOUD_PROJECT") and where("GOOGLE_CLOUD_LOCATION")
        if not (project or where("GOOGLE_API_KEY")):
            return Check(
                "auth",
                "fail",
                summary + "; needs GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION, or "
                "GOOGLE_API_KEY",
                fix="export GOOGLE_CLOUD_PROJECT=... GOOGLE_CLOUD_LOCATION=...",
            )
        return Check("auth", "ok", summary)
    return Check("auth", "ok", summary)


def _trusted_by_rules(rules: Mapping[str, Any], cwd: Path) -> bool | None:
    """``isPathTrusted``: the longest matching rule wins; ``None`` when none matches."""
    location = os.path.realpath(cwd)
    best, verdict = -1, None
    for rule, level in rules.items():
        folder = os.path.dirname(rule) if level == "TRUST_PARENT" else rule
        folder = os.path.realpath(folder)
        inside = location == folder or location.startswith(folder.rstrip(os.sep) + os.sep)
        if inside and len(rule) > best:
            best, verdict = len(rule), level
    if verdict == "DO_NOT_TRUST":
        return False
    if verdict in ("TRUST_FOLDER", "TRUST_PARENT"):
        return True
    return None


def trust(home: Path, cwd: Path, environ: Mapping[str, str]) -> Check:
    """Whether Gemini CLI trusts the workspace; headless, an untrusted one exits 55."""
    name = "folder trust"
    fix = (
        "export GEMINI_CLI_TRUST_WORKSPACE=true for headless runs, or trust the folder once "
        "in interactive `gemini`"
    )
    if environ.get("GEMINI_RESTRICTED_MODE") == "true":
        return Check(name, "fail", "GEMINI_RESTRICTED_MODE=true: never trusted", fix=fix)
    if environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "false":
        return Check(name, "fail", "GEMINI_CLI_TRUST_WORKSPACE=false: never trusted", fix=fix)
    if environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        return Check(name, "ok", f"{cwd} is trusted (GEMINI_CLI_TRUST_WORKSPACE=true)")
    enabled, _ = _merged(home, cwd, "security.folderTrust.enabled")
    if enabled is False:
        return Check(name, "ok", "folder trust is off (security.folderTrust.enabled: false)")
    path = Path(
        environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or home / ".gemini" / "trustedFolders.json"
    )
    rules, problem = read_settings(path)
    if problem:
        return Check(name, "fail", "the trusted folders file does not load (exit 52)", [problem])
    verdict = _trusted_by_rules(rules, cwd)
    if verdict is True:
        return Check(name, "ok", f"{cwd} is trusted ({path})")
    why = "marked DO_NOT_TRUST" if verdict is False else "not trusted"
    return Check(name, "fail", f"{cwd} is {why}: headless runs here exit 55", [str(path)], fix=fix)


def retention(home: Path, cwd: Path) -> Check:
    """Whether Gemini's session cleanup may delete sessions gemwire resumes (§5.5)."""
    enabled, source = _merged(home, cwd, "general.sessionRetention.enabled")
    if enabled is False:
        return Check("session retention", "ok", f"cleanup is off ({source})")
    where = f"set in {source}" if source else "on by default"
    return Check(
        "session retention",
        "warn",
        f"cleanup at startup is {where}: it can delete the file of a resumed session",
        fix=f'set "general": {{"sessionRetention": {{"enabled": false}}}} in '
        f"{home / '.gemini' / 'settings.json'}",
    )


def gemini_cli(executable: str | None, cwd: Path) -> tuple[Check, Path | None]:
    """Every place the CLI is looked for, which one wins, and its version against the tested ones."""
    from gemwire.errors import GemwireError
    from gemwire.runners.discovery import (
        OLDEST_SUPPORTED,
        TESTED_VERSIONS,
        candidates,
        find_gemini,
        package_version,
    )

    details = []
    for source, path in candidates(executable, cwd):
        if path.is_file() and os.access(path, os.X_OK):
            details.append(f"{source}: {path} ({package_version(path) or 'version unknown'})")
    try:
        found = find_gemini(executable, cwd=str(cwd))
    except GemwireError as exc:
        # The message names every place looked at and the install command.
        return Check("Gemini CLI", "fail", str(exc), details), None
    tested = f"tested: {', '.join(TESTED_VERSIONS)}"
    summary = f"{found.version or 'version unknown'} at {found.path} (from {found.source})"
    details.insert(0, tested)
    if found.version is None:
        return (
            Check(
                "Gemini CLI",
                "warn",
                summary,
                details,
                fix="no package.json of @google/gemini-cli next to it; is it a wrapper script?",
            ),
            Path(found.path),
        )
    if found.newer_than_tested:
        details.append("unknown output is kept as `unknown` events")
        return Check("Gemini CLI", "warn", summary + ": newer than tested", details), Path(
            found.path
        )
    if found.version in TESTED_VERSIONS:
        verdict = "tested"
    else:
        verdict = f"within the tested range {OLDEST_SUPPORTED} to {TESTED_VERSIONS[-1]}"
    return Check("Gemini CLI", "ok", f"{summary}: {verdict}", details), Path(found.path)


_NODE_VERSION = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")
_ENGINES = re.compile(r">=\s*(\d+)(?:\.(\d+))?")


def node_version(text: str) -> tuple[int, int, int] | None:
    """``v20.11.1`` -> ``(20, 11, 1)``."""
    match = _NODE_VERSION.search(text)
    return (int(match.group(1)), int(match.group(2)), int(match.group(3))) if match else None


def _required_node(launcher: Path | None) -> tuple[int, int]:
    """The ``engines.node`` minimum of the CLI package the launcher belongs to (else 20)."""
    if launcher is not None:
        for folder in launcher.resolve().parents:
            manifest, _ = read_settings(folder / "package.json")
            if manifest.get("name") == "@google/gemini-cli":
                match = _ENGINES.search(str(_get(manifest, "engines.node") or ""))
                if match:
                    return int(match.group(1)), int(match.group(2) or 0)
                break
    return 20, 0


def node(launcher: Path | None, environ: Mapping[str, str]) -> Check:
    """The Node.js that runs the CLI (``#!/usr/bin/env node``) and the version it needs."""
    import anyio

    from gemwire.errors import AgentNotFound
    from gemwire.runners.process import run_process

    need = _required_node(launcher)
    wanted = f"Node.js {need[0]}.{need[1]} or newer"
    found = shutil.which("node", path=environ.get("PATH"))
    if found is None:
        return Check("Node.js", "fail", "node is not on PATH", fix=f"install {wanted}")
    try:
        output = anyio.run(partial(run_process, [found, "--version"], timeout=10))
    except AgentNotFound as exc:
        return Check("Node.js", "fail", str(exc), fix=f"install {wanted}")
    version = node_version(output.stdout.decode(errors="replace"))
    if version is None:
        return Check("Node.js", "fail", f"{found} --version said nothing useful", fix=wanted)
    text = ".".join(map(str, version))
    if version[:2] < need:
        return Check("Node.js", "fail", f"{text} at {found}; the CLI needs {wanted}", fix=wanted)
    return Check("Node.js", "ok", f"{text} at {found}")


def config_file(environ: Mapping[str, str]) -> Check:
    """gemwire's own settings file: where it is, and whether it loads."""
    from gemwire.cli.settings import ConfigFileError, config_path, effective

    path = config_path(environ)
    try:
        found = effective(environ)
    except ConfigFileError as exc:
        fix = "`gemwire config set KEY VALUE` or `gemwire config unset KEY` repairs it"
        return Check("gemwire config", "fail", exc.message, fix=fix)
    summary = f"{path} (none yet)" if not path.exists() else str(path)
    details = [f"{name} = {value!r} ({source})" for name, (value, source) in found.items()]
    return Check("gemwire config", "ok", summary, details)
