"""Finding the Gemini CLI, and telling its version without starting it.

Order: an explicit path > ``$GEMINI_CLI_PATH`` > ``node_modules/.bin/gemini`` in the
working directory or a parent (a project-local install) > ``$PATH`` > common install
locations (`common_locations`: per OS, with Homebrew's and nvm's on macOS). The version
comes from the ``package.json`` of the installed ``@google/gemini-cli`` package next to the
launcher; starting ``gemini --version`` would cost seconds.

On Windows npm installs ``gemini.cmd`` and ``gemini.ps1`` shims, not a program. Running a
``.cmd`` means ``cmd.exe`` re-parsing every argument by its own quoting rules, so gemwire
runs what the shim runs instead (`shim_command`: the node and the script the shim names,
or the ``.exe`` it names). The prompt never is an argument anyway: it travels on stdin, on
every OS.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path, PureWindowsPath

import msgspec

from gemwire.errors import GeminiNotFound, UnsupportedVersion

__all__ = (
    "OLDEST_SUPPORTED",
    "TESTED_VERSIONS",
    "GeminiExecutable",
    "candidates",
    "common_locations",
    "find_gemini",
    "npm_launcher",
    "shim_command",
)

TESTED_VERSIONS = ("0.15.4", "0.30.0", "0.61.0")
"""The Gemini CLI versions gemwire's tests run against (the real binaries, offline)."""
OLDEST_SUPPORTED = TESTED_VERSIONS[0]

_POSIX_LOCATIONS = (
    "~/.npm-global/bin/gemini",
    "~/.local/bin/gemini",
    "~/.volta/bin/gemini",
    "/usr/local/bin/gemini",
    "/opt/homebrew/bin/gemini",
    "/usr/bin/gemini",
)
_LOCATIONS = {
    "win32": (
        "~/AppData/Roaming/npm/gemini.cmd",  # npm install -g (%APPDATA%\npm)
        "~/AppData/Local/Volta/bin/gemini.exe",
        "C:/Program Files/nodejs/gemini.cmd",  # nvm-windows' default symlink, the installer's
    ),
    "darwin": (
        "/opt/homebrew/bin/gemini",  # Homebrew on Apple silicon (brew install gemini-cli)
        "/usr/local/bin/gemini",  # Homebrew on Intel, and npm -g with the nodejs.org installer
        "~/.nvm/versions/node/*/bin/gemini",  # nvm: every installed node, newest first
        "~/.npm-global/bin/gemini",
        "~/.volta/bin/gemini",
        "~/.local/bin/gemini",
    ),
}
_COMMON_LOCATIONS = _LOCATIONS.get(sys.platform, _POSIX_LOCATIONS)
"""This OS's common install locations (``~`` and ``*`` expanded by `common_locations`)."""
_SHIM_TARGETS = (
    # What npm's own reader of its shims (read-cmd-shim) takes as the target: the quoted
    # path the shim's arguments follow.
    re.compile(r'"%(?:~dp0|dp0%)\\([^"]+?)"\s+%[*]', re.IGNORECASE),  # npm's cmd-shim: .cmd
    re.compile(r'"\$basedir/([^"]+?)"\s+\$args'),  # and .ps1
)


class GeminiExecutable(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    version: str | None
    """``None`` when no ``package.json`` of ``@google/gemini-cli`` was found next to it."""
    source: str
    """Where it was found: ``explicit``, ``GEMINI_CLI_PATH``, ``node_modules``, ``PATH``,
    or ``common location``."""
    command: tuple[str, ...] = ()
    """What runs it when that is not ``path`` alone: an npm shim's node and script."""

    @property
    def argv(self) -> tuple[str, ...]:
        """The command that starts it, before its options."""
        return self.command or (self.path,)

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
    (the nearest one up from where the launcher resolves that names ``package``; for an npm
    shim, which links nothing, from where the file it runs is)."""
    for folder in (_shim_target(launcher) or launcher).resolve().parents:
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


def common_locations(patterns: tuple[str, ...] | None = None) -> list[Path]:
    """The common install locations (default: this OS's), ``~`` expanded and each ``*``
    pattern as the folders that match, highest version first.

    >>> [path.as_posix() for path in common_locations(("/usr/bin/gemini",))]
    ['/usr/bin/gemini']
    """
    found: list[Path] = []
    for pattern in _COMMON_LOCATIONS if patterns is None else patterns:
        path = Path(pattern).expanduser()
        if "*" not in pattern:
            found.append(path)
            continue
        anchor = Path(path.anchor)
        matches = anchor.glob(str(path.relative_to(anchor)))
        found += sorted(matches, key=lambda p: version_key(_version_part(p)), reverse=True)
    return found


def _version_part(path: Path) -> str:
    """``v22.1.0`` from ``.../node/v22.1.0/bin/gemini``: the part that names a version."""
    for part in reversed(path.parts):
        if re.fullmatch(r"v?\d+(\.\d+)*", part):
            return part.lstrip("v")
    return "0"


def npm_launcher(executable: str, platform: str = sys.platform) -> str:
    """The name of the launcher npm links into ``node_modules/.bin`` for ``executable`` on
    ``platform``: on Windows the ``.cmd`` shim (the file without a suffix beside it is a
    shell script, for Git Bash, which Windows cannot run).

    >>> npm_launcher("codex-acp", "win32"), npm_launcher("codex-acp", "darwin")
    ('codex-acp.cmd', 'codex-acp')
    """
    return f"{executable}.cmd" if platform == "win32" else executable


def shim_command(path: Path) -> tuple[str, ...]:
    """How to run ``path``: an npm shim (``.cmd``, ``.ps1``) as the node and the script it
    names, or as the program it names when that is one (an ``.exe``: OpenCode's launcher);
    anything else as itself (also a shim whose target cannot be read from it).

    npm's shims run ``node.exe`` next to them if there is one, else ``node`` on ``PATH``.
    """
    target = _shim_target(path)
    if target is None:
        return (str(path),)
    if target.suffix.lower() == ".exe":  # no shebang: npm's shim runs it as it is
        return (str(target),)
    bundled = path.parent / "node.exe"
    node = str(bundled) if bundled.is_file() else shutil.which("node") or "node"
    return (node, str(target))


def _shim_target(path: Path) -> Path | None:
    """The file an npm shim runs; ``None`` for anything else, or a shim that names none."""
    if path.suffix.lower() not in (".cmd", ".bat", ".ps1"):
        return None
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return None
    for pattern in _SHIM_TARGETS:
        match = pattern.search(text)
        if match:
            return path.parent.joinpath(*PureWindowsPath(match.group(1)).parts)
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
        ("node_modules", folder / "node_modules" / ".bin" / npm_launcher("gemini"))
        for folder in (cwd, *cwd.parents)
    )
    on_path = shutil.which("gemini")
    if on_path:
        found.append(("PATH", Path(on_path)))
    found.extend(("common location", path) for path in common_locations())
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
            path = path.absolute()
            return GeminiExecutable(
                path=str(path),
                version=version,
                source=source,
                command=() if sys.platform != "win32" else shim_command(path),
            )
        if source in ("explicit", "GEMINI_CLI_PATH"):
            raise GeminiNotFound(f"{source} {path} is not an executable file", executable=str(path))
    raise GeminiNotFound(
        "Gemini CLI not found (looked at $GEMINI_CLI_PATH, node_modules/.bin, $PATH and "
        f"common install locations). Install it: {GeminiNotFound.INSTALL_COMMAND}"
    )
