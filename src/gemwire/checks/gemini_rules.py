"""Gemini CLI's rules for a headless run: its home, auth, folder trust and session cleanup.

They follow Gemini CLI 0.61.0's own code (docs/gemini-cli.md#environment-variables,
docs/gemini-cli.md#exit-codes, docs/gemini-cli.md#session-cleanup):
``getAuthTypeFromEnv`` / ``validateAuthMethod`` for auth, ``checkPathTrust`` for folder
trust, ``general.sessionRetention`` for the session cleanup.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gemwire.checks.check import Check
from gemwire.checks.settings_files import (
    env_file,
    env_file_values,
    merged_setting,
    read_settings,
)

__all__ = ("auth", "gemini_home", "retention", "trust")


def gemini_home(home: Path, source: str) -> Check:
    """The home whose ``.gemini`` folder the runs use, and whether its settings load."""
    folder = home / ".gemini"
    name = "Gemini home"
    if not folder.is_dir():
        return Check(
            name=name,
            status="warn",
            summary=f"{home} (from {source}) has no .gemini folder yet",
            fix="run `gemini` there once (interactively), or set GEMINI_API_KEY; "
            "the first run creates it",
        )
    _, problem = read_settings(folder / "settings.json")
    if problem:
        return Check(
            name=name,
            status="fail",
            summary=f"{home} (from {source}): its settings.json does not load",
            details=(problem,),
            fix="fix the JSON of settings.json (Gemini CLI exits 52 on it)",
        )
    return Check(name=name, status="ok", summary=f"{home} (from {source})")


def auth(home: Path, cwd: Path, environ: Mapping[str, str]) -> Check:
    """Which auth method headless runs will use, and whether what it needs is there."""
    dotenv = env_file(cwd, home)
    from_file = env_file_values(dotenv)
    merged = {**from_file, **environ}  # a .env file never overrides the environment

    def where(name: str) -> str | None:
        if environ.get(name):
            return "the environment"
        return str(dotenv) if from_file.get(name) else None

    def flag(name: str) -> bool:
        return merged.get(name) == "true"

    configured, settings_file = merged_setting(home, cwd, "security.auth.selectedType")
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
            name="auth",
            status="fail",
            summary="no auth method: headless runs exit 41",
            fix="export GEMINI_API_KEY=... (or put it in ~/.gemini/.env), or sign in once with "
            "`gemini` and pick 'Login with Google'",
        )
    summary = f"{method} (from {source})"
    if method == "gemini-api-key":
        found = where("GEMINI_API_KEY")
        if found is None:
            return Check(
                name="auth",
                status="warn",
                summary=summary + "; GEMINI_API_KEY is not set",
                details=(
                    "unless a key was saved in the system keychain by `gemini`, runs exit 41",
                ),
                fix="export GEMINI_API_KEY=... or put it in ~/.gemini/.env",
            )
        return Check(
            name="auth",
            status="ok",
            summary=summary,
            details=(f"GEMINI_API_KEY is set in {found}",),
        )
    if method == "oauth-personal":
        creds = home / ".gemini" / "oauth_creds.json"
        if not creds.is_file():
            return Check(
                name="auth",
                status="fail",
                summary=summary + f"; no saved login ({creds})",
                fix="run `gemini` once interactively and sign in; headless runs cannot open a "
                "browser",
            )
        return Check(name="auth", status="ok", summary=summary, details=(f"saved login: {creds}",))
    if method == "vertex-ai":
        project = where("GOOGLE_CLOUD_PROJECT") and where("GOOGLE_CLOUD_LOCATION")
        if not (project or where("GOOGLE_API_KEY")):
            return Check(
                name="auth",
                status="fail",
                summary=summary + "; needs GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION, or "
                "GOOGLE_API_KEY",
                fix="export GOOGLE_CLOUD_PROJECT=... GOOGLE_CLOUD_LOCATION=...",
            )
    return Check(name="auth", status="ok", summary=summary)


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
        return Check(
            name=name, status="fail", summary="GEMINI_RESTRICTED_MODE=true: never trusted", fix=fix
        )
    if environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "false":
        summary = "GEMINI_CLI_TRUST_WORKSPACE=false: never trusted"
        return Check(name=name, status="fail", summary=summary, fix=fix)
    if environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        summary = f"{cwd} is trusted (GEMINI_CLI_TRUST_WORKSPACE=true)"
        return Check(name=name, status="ok", summary=summary)
    enabled, _ = merged_setting(home, cwd, "security.folderTrust.enabled")
    if enabled is False:
        summary = "folder trust is off (security.folderTrust.enabled: false)"
        return Check(name=name, status="ok", summary=summary)
    path = Path(
        environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or home / ".gemini" / "trustedFolders.json"
    )
    rules, problem = read_settings(path)
    if problem:
        summary = "the trusted folders file does not load (exit 52)"
        return Check(name=name, status="fail", summary=summary, details=(problem,))
    verdict = _trusted_by_rules(rules, cwd)
    if verdict is True:
        return Check(name=name, status="ok", summary=f"{cwd} is trusted ({path})")
    why = "marked DO_NOT_TRUST" if verdict is False else "not trusted"
    return Check(
        name=name,
        status="fail",
        summary=f"{cwd} is {why}: headless runs here exit 55",
        details=(str(path),),
        fix=fix,
    )


def retention(home: Path, cwd: Path) -> Check:
    """Whether Gemini's session cleanup may delete sessions gemwire resumes (§5.5)."""
    name = "session retention"
    enabled, source = merged_setting(home, cwd, "general.sessionRetention.enabled")
    if enabled is False:
        return Check(name=name, status="ok", summary=f"cleanup is off ({source})")
    where = f"set in {source}" if source else "on by default"
    return Check(
        name=name,
        status="warn",
        summary=f"cleanup at startup is {where}: it can delete the file of a resumed session",
        fix=f'set "general": {{"sessionRetention": {{"enabled": false}}}} in '
        f"{home / '.gemini' / 'settings.json'}",
    )
