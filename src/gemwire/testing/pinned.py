"""The Gemini CLI versions gemwire is tested against, installed project-locally.

``make setup`` installs each into ``clis/gemini-<version>/`` with ``npm ci`` from the
committed lockfile; nothing is installed globally.

On Windows npm's ``node_modules/.bin`` holds three launchers: ``gemini`` (a shell script,
for Git Bash), ``gemini.cmd`` and ``gemini.ps1``. Only the ``.cmd`` is a Windows launcher:
`pinned_gemini` returns it (what ``--executable`` and `find_gemini` take), and
`pinned_gemini_command` the node and script it runs, for a caller that starts the CLI
itself.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gemwire.errors import GeminiNotFound
from gemwire.runners.agents import clis_dir
from gemwire.runners.discovery import TESTED_VERSIONS, npm_launcher, shim_command

__all__ = ("CURRENT_VERSION", "PINNED_VERSIONS", "pinned_gemini", "pinned_gemini_command")

CURRENT_VERSION = TESTED_VERSIONS[-1]
PINNED_VERSIONS = tuple(reversed(TESTED_VERSIONS))
"""Newest first: 0.61.0 is current; 0.30.0 (slug project folders, single-JSON sessions) and
0.15.4 (hash project folders) keep the older session-file layouts covered."""


def pinned_gemini(version: str = CURRENT_VERSION, *, platform: str = sys.platform) -> Path:
    """The ``gemini`` launcher of a pinned version (``gemini.cmd`` on Windows).

    Looks in ``$GEMWIRE_CLIS_DIR`` or, in a source checkout, ``<repo>/clis``. Raises
    `GeminiNotFound` saying how to install it when it is missing.
    """
    if version not in PINNED_VERSIONS:
        raise GeminiNotFound(
            f"Gemini CLI {version} is not a pinned version; pinned: {', '.join(PINNED_VERSIONS)}"
        )
    folder = clis_dir() / f"gemini-{version}"
    launcher = folder / "node_modules" / ".bin" / npm_launcher("gemini", platform)
    if not launcher.exists():
        raise GeminiNotFound(
            f"pinned Gemini CLI {version} is not installed in {folder}: run `make setup` "
            f"(it runs `npm ci` there from the committed lockfile)",
            executable=str(launcher),
        )
    return launcher


def pinned_gemini_command(
    version: str = CURRENT_VERSION, *, platform: str = sys.platform
) -> tuple[str, ...]:
    """The command that starts a pinned version: its launcher, or on Windows the node and
    script its ``.cmd`` names (`shim_command`: ``cmd.exe`` would re-parse every argument).
    Raises as `pinned_gemini`."""
    return shim_command(pinned_gemini(version, platform=platform))
