"""Reading Gemini CLI's settings and ``.env`` files as Gemini CLI 0.61.0 reads them.

Settings files are JSON with comments, merged workspace over user; the ``.env`` file is
the first found from the workspace up, then in the home (``findEnvFile``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = (
    "env_file",
    "env_file_values",
    "merged_setting",
    "read_settings",
    "setting",
    "strip_json_comments",
)


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


def setting(settings: Mapping[str, Any], dotted: str) -> Any:
    """The value at ``dotted`` (``"general.sessionRetention.enabled"``), else ``None``.

    >>> setting({"a": {"b": 1}}, "a.b"), setting({"a": 1}, "a.b")
    (1, None)
    """
    value: Any = settings
    for part in dotted.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def merged_setting(home: Path, cwd: Path, dotted: str) -> tuple[Any, Path | None]:
    """A setting as Gemini merges them (workspace over user), and the file it came from."""
    for path in (cwd / ".gemini" / "settings.json", home / ".gemini" / "settings.json"):
        value = setting(read_settings(path)[0], dotted)
        if value is not None:
            return value, path
    return None, None


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


def env_file_values(path: Path | None) -> dict[str, str]:
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
