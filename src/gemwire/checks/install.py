"""What is installed: the Gemini CLI that runs would start, and the Node.js that runs it."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from functools import partial
from pathlib import Path

import anyio

from gemwire.checks.check import Check
from gemwire.checks.settings_files import read_settings, setting
from gemwire.errors import AgentNotFound, GemwireError
from gemwire.runners.discovery import (
    OLDEST_SUPPORTED,
    TESTED_VERSIONS,
    candidates,
    find_gemini,
    package_version,
)
from gemwire.runners.process import run_process

__all__ = ("gemini_cli", "node", "node_version")


def gemini_cli(executable: str | None, cwd: Path) -> tuple[Check, Path | None]:
    """Every place the CLI is looked for, which one wins, and its version against the tested
    ones; and the launcher found (``None`` when none is)."""
    name = "Gemini CLI"
    details = [
        f"{source}: {path} ({package_version(path) or 'version unknown'})"
        for source, path in candidates(executable, cwd)
        if path.is_file() and os.access(path, os.X_OK)
    ]
    try:
        found = find_gemini(executable, cwd=str(cwd))
    except GemwireError as exc:
        # The message names every place looked at and the install command.
        return Check(name=name, status="fail", summary=str(exc), details=tuple(details)), None
    launcher = Path(found.path)
    summary = f"{found.version or 'version unknown'} at {found.path} (from {found.source})"
    details.insert(0, f"tested: {', '.join(TESTED_VERSIONS)}")
    if found.version is None:
        fix = "no package.json of @google/gemini-cli next to it; is it a wrapper script?"
        return Check(
            name=name, status="warn", summary=summary, details=tuple(details), fix=fix
        ), launcher
    if found.newer_than_tested:
        details.append("unknown output is kept as `unknown` events")
        summary += ": newer than tested"
        return Check(name=name, status="warn", summary=summary, details=tuple(details)), launcher
    if found.version in TESTED_VERSIONS:
        verdict = "tested"
    else:
        verdict = f"within the tested range {OLDEST_SUPPORTED} to {TESTED_VERSIONS[-1]}"
    summary += f": {verdict}"
    return Check(name=name, status="ok", summary=summary, details=tuple(details)), launcher


_NODE_VERSION = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")
_ENGINES = re.compile(r">=\s*(\d+)(?:\.(\d+))?")


def node_version(text: str) -> tuple[int, int, int] | None:
    """``v20.11.1`` -> ``(20, 11, 1)``.

    >>> node_version("v20.11.1\\n"), node_version("garbage")
    ((20, 11, 1), None)
    """
    match = _NODE_VERSION.search(text)
    return (int(match.group(1)), int(match.group(2)), int(match.group(3))) if match else None


def _required_node(launcher: Path | None) -> tuple[int, int]:
    """The ``engines.node`` minimum of the CLI package the launcher belongs to (else 20)."""
    if launcher is not None:
        for folder in launcher.resolve().parents:
            manifest, _ = read_settings(folder / "package.json")
            if manifest.get("name") == "@google/gemini-cli":
                match = _ENGINES.search(str(setting(manifest, "engines.node") or ""))
                if match:
                    return int(match.group(1)), int(match.group(2) or 0)
                break
    return 20, 0


def node(launcher: Path | None, environ: Mapping[str, str]) -> Check:
    """The Node.js that runs the CLI (``#!/usr/bin/env node``) and the version it needs."""
    name = "Node.js"
    need = _required_node(launcher)
    wanted = f"Node.js {need[0]}.{need[1]} or newer"
    found = shutil.which("node", path=environ.get("PATH"))
    if found is None:
        return Check(
            name=name, status="fail", summary="node is not on PATH", fix=f"install {wanted}"
        )
    try:
        output = anyio.run(partial(run_process, [found, "--version"], timeout=10))
    except AgentNotFound as exc:
        return Check(name=name, status="fail", summary=str(exc), fix=f"install {wanted}")
    version = node_version(output.stdout.decode(errors="replace"))
    if version is None:
        summary = f"{found} --version said nothing useful"
        return Check(name=name, status="fail", summary=summary, fix=wanted)
    text = ".".join(map(str, version))
    if version[:2] < need:
        summary = f"{text} at {found}; the CLI needs {wanted}"
        return Check(name=name, status="fail", summary=summary, fix=wanted)
    return Check(name=name, status="ok", summary=f"{text} at {found}")
