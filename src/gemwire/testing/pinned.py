"""The Gemini CLI versions gemwire is tested against, installed project-locally.

``make setup`` installs each into ``clis/gemini-<version>/`` with ``npm ci`` from the
committed lockfile; nothing is installed globally.
"""

from __future__ import annotations

from pathlib import Path

from gemwire.errors import GeminiNotFound
from gemwire.runners.agents import clis_dir
from gemwire.runners.discovery import TESTED_VERSIONS

__all__ = ("CURRENT_VERSION", "PINNED_VERSIONS", "pinned_gemini")

CURRENT_VERSION = TESTED_VERSIONS[-1]
PINNED_VERSIONS = tuple(reversed(TESTED_VERSIONS))
"""Newest first: 0.61.0 is current; 0.30.0 (slug project folders, single-JSON sessions) and
0.15.4 (hash project folders) keep the older session-file layouts covered."""


def pinned_gemini(version: str = CURRENT_VERSION) -> Path:
    """The ``gemini`` launcher of a pinned version.

    Looks in ``$GEMWIRE_CLIS_DIR`` or, in a source checkout, ``<repo>/clis``. Raises
    `GeminiNotFound` saying how to install it when it is missing.
    """
    if version not in PINNED_VERSIONS:
        raise GeminiNotFound(
            f"Gemini CLI {version} is not a pinned version; pinned: {', '.join(PINNED_VERSIONS)}"
        )
    folder = clis_dir() / f"gemini-{version}"
    launcher = folder / "node_modules" / ".bin" / "gemini"
    if not launcher.exists():
        raise GeminiNotFound(
            f"pinned Gemini CLI {version} is not installed in {folder}: run `make setup` "
            f"(it runs `npm ci` there from the committed lockfile)",
            executable=str(launcher),
        )
    return launcher
