"""Finding the Gemini CLI, and telling its version without starting it.

Order: an explicit path > ``$GEMINI_CLI_PATH`` > ``node_modules/.bin/gemini`` in the
working directory or a parent (a project-local install) > ``$PATH`` > common install
locations. The version comes from the ``package.json`` of the installed
``@google/gemini-cli`` package next to the launcher; starting ``gemini --version`` would
cost seconds.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import msgspec

from gemwire.errors import GeminiNotFound, UnsupportedVersion

__all__ = ("OLDEST_SUPPORTED", "TESTED_VERSIONS", "GeminiExecutable", "candidates", "find_gemini")

TESTED_VERSIONS = ("0.15.4", "0.30.0", "0.61.0")
"""The Gemini CLI versions gemwire's tests run against (the real binaries, offline)."""
OLDEST_SUPPORTED = TESTED_VERSIONS[0]

_COMMON_LOCATIONS = (
    "~/.npm-global/bin/gemini",
    "~/.local/bin/gemini",
    "~/.volta/bin/gemini",
    "/usr/local/bin/gemini",
    "/opt/homebrew/bin/gemini",
    "/usr/bin/gemini",
)


class GeminiExecutable(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    version: str | None
    """``None`` when no ``package.json`` of ``@google/gemini-cli`` was found next to it."""
    source: str
    """Where it was found: ``explicit``, ``GEMINI_CLI_PATH``, ``node_modules``, ``PATH``,
    or ``common location``."""

    @property
    def newer_than_tested(self) -> bool:
        return self.version is not None and version_key(self.version) > version_key(
            TESTED_VERSIONS[-1]
        )


def version_key(version: str) -> tuple[int, ...]:
    """``0.61.0`` -> ``(0, 61, 0)``, for comparing versions (pre-release tags ignored)."""
    return tuple(int(part) if part.isdigit() else 0 for part in version.split("-")[0].split("."))


def package_version(launcher: Path, package: str = "@google/gemini-cli") -> str | None:
    """The version of the npm ``package`` a launcher belongs to, from its ``package.json``
    (the nearest one up from where the launcher resolves that names ``package``)."""
    for folder in launcher.resolve().parents:
        manifest = folder / "package.json"
        if not manifest.is_file():
            continue
        try:
            data = json.loads(manifest.read_text())
        except (OSError, ValueError):
            return None
        if data.get("name") == package:
            version = data.get("version")
            return version if isinstance(version, str) else None
    return None


def candidates(executable: str | None, cwd: Path) -> list[tuple[str, Path]]:
    """Every place `find_gemini` looks, in order, as (source, path); ``gemwire doctor`` shows them."""
    found: list[tuple[str, Path]] = []
    if executable:
        found.append(("explicit", Path(executable).expanduser()))
        return found
    configured = os.environ.get("GEMINI_CLI_PATH")
    if configured:
        found.append(("GEMINI_CLI_PATH", Path(configured).expanduser()))
    found.extend(
        ("node_modules", folder / "node_modules" / ".bin" / "gemini")
        for folder in (cwd, *cwd.parents)
    )
    on_path = shutil.which("gemini")
    if on_path:
        found.append(("PATH", Path(on_path)))
    found.extend(("common location", Path(p).expanduser()) for p in _COMMON_LOCATIONS)
    return found


def find_gemini(executable: str | None = None, *, cwd: str | None = None) -> GeminiExecutable:
    """The Gemini CLI to run.

    Raises `GeminiNotFound` (with the install command) when there is none, and
    `UnsupportedVersion` when it is older than `OLDEST_SUPPORTED`.
    """
    start = Path(cwd or os.getcwd()).resolve()
    for source, path in candidates(executable, start):
        if path.is_file() and os.access(path, os.X_OK):
            version = package_version(path)
            if version is not None and version_key(version) < version_key(OLDEST_SUPPORTED):
                raise UnsupportedVersion(
                    f"Gemini CLI {version} at {path} is older than {OLDEST_SUPPORTED}, the oldest "
                    f"gemwire supports: npm install -g @google/gemini-cli"
                )
            # Absolute: a relative path given must not be looked up on $PATH when run.
            return GeminiExecutable(path=str(path.absolute()), version=version, source=source)
        if source in ("explicit", "GEMINI_CLI_PATH"):
            raise GeminiNotFound(f"{source} {path} is not an executable file", executable=str(path))
    raise GeminiNotFound(
        "Gemini CLI not found (looked at $GEMINI_CLI_PATH, node_modules/.bin, $PATH and "
        f"common install locations). Install it: {GeminiNotFound.INSTALL_COMMAND}"
    )
