"""gemwire's own settings: defaults for the run options, from a TOML file, then the environment.

    model = "flash"
    approval_mode = "auto_edit"
    timeout = 600.0
    include_directories = ["~/notes"]

The file is ``$GEMWIRE_CONFIG``, else ``$XDG_CONFIG_HOME/gemwire/config.toml``, else
``~/.config/gemwire/config.toml``. Each key can also come from ``GEMWIRE_<KEY>`` in the
environment (lists comma-separated), and a flag on the command line beats both: file <
environment < flags. A key applies to every command that has an option of that name
(``run``, and ``acp`` for ``permissions``). The file is read with ``tomllib`` and written
by `format_toml` (flat keys, the few value types the settings use), so there is no TOML
dependency.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import click

__all__ = (
    "KEYS",
    "ConfigFileError",
    "Key",
    "config_path",
    "effective",
    "format_toml",
    "load_config",
    "parse_value",
    "read_config",
    "write_config",
)

Value = str | int | float | bool | list[str]


class ConfigFileError(click.ClickException):
    """The config file or a ``GEMWIRE_*`` variable is not valid; a usage error (exit 2)."""

    exit_code = 2


@dataclass(frozen=True)
class Key:
    name: str
    type: type[str | int | float | bool | list[str]]
    help: str
    choices: tuple[str, ...] = ()
    path: bool = False
    """A path: ``~`` is expanded when the value is used."""

    @property
    def env(self) -> str:
        return f"GEMWIRE_{self.name.upper()}"


KEYS: dict[str, Key] = {
    key.name: key
    for key in (
        Key("model", str, "model or alias (auto, pro, flash, flash-lite)"),
        Key(
            "approval_mode",
            str,
            "which tools run without asking",
            choices=("default", "auto_edit", "yolo", "plan"),
        ),
        Key("sandbox", bool, "run tools in Gemini's sandbox"),
        Key("include_directories", list, "more workspace folders", path=True),
        Key("policy_files", list, "policy files or folders", path=True),
        Key("allowed_tools", list, "tools allowed without asking (deprecated upstream)"),
        Key("extensions", list, "extensions to use"),
        Key("gemini_home", str, "the folder holding .gemini (GEMINI_CLI_HOME)", path=True),
        Key("executable", str, "the gemini executable to run", path=True),
        Key("timeout", float, "seconds for a whole run"),
        Key("idle_timeout", float, "seconds without output before a run is stopped"),
        Key("max_tool_calls", int, "stop a run after this many tool calls"),
        Key("max_model_turns", int, "stop a run after this many model turns"),
        Key("max_rate_limit_retries", int, "stop a run after this many 429 retries"),
        Key(
            "output_format",
            str,
            "what gemwire asks Gemini CLI to print",
            choices=("stream-json", "json"),
        ),
        Key("prices", str, "a price table for `gemwire usage`, over gemwire's own", path=True),
        Key(
            "permissions",
            str,
            "how `gemwire acp` answers permission requests",
            choices=("ask", "deny", "reads", "edits", "all"),
        ),
    )
}
"""Every setting, by name; the names are the option names of the commands (``--idle-timeout``)."""


def config_path(environ: Mapping[str, str] = os.environ) -> Path:
    """Where the config file is (it may not exist yet)."""
    configured = environ.get("GEMWIRE_CONFIG")
    if configured:
        return Path(configured).expanduser()
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "gemwire" / "config.toml"


def _check(key: Key, value: object, where: str) -> Value:
    """``value`` as read from TOML, checked against ``key``."""
    if key.type is list:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigFileError(f"{where}: {key.name} must be a list of strings")
        return list(value)
    if key.type is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if type(value) is not key.type:
        raise ConfigFileError(f"{where}: {key.name} must be a {key.type.__name__}, not {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigFileError(f"{where}: {key.name} must be a finite number")
    if key.choices and value not in key.choices:
        raise ConfigFileError(f"{where}: {key.name} must be one of {', '.join(key.choices)}")
    assert isinstance(value, str | int | float | bool)
    return value


def load_config(path: Path) -> tuple[dict[str, Value], list[tuple[str | None, str]]]:
    """The valid settings in ``path`` (none if it does not exist), and what is wrong with the
    rest: (the key, or ``None`` for the whole file; the message)."""
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, []
    except OSError as exc:
        raise ConfigFileError(f"{path}: cannot read it: {exc.strerror}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        return {}, [(None, f"{path}: not valid TOML: {exc}")]
    values: dict[str, Value] = {}
    problems: list[tuple[str | None, str]] = []
    for name, value in data.items():
        key = KEYS.get(name)
        if key is None:
            problems.append((name, f"{path}: unknown setting {name!r} (see `gemwire config list`)"))
            continue
        try:
            values[name] = _check(key, value, str(path))
        except ConfigFileError as exc:
            problems.append((name, exc.message))
    return values, problems


def read_config(path: Path) -> dict[str, Value]:
    """The settings in ``path`` (none if it does not exist); a problem is a `ConfigFileError`."""
    values, problems = load_config(path)
    if problems:
        raise ConfigFileError(problems[0][1])
    return values


def parse_value(key: Key, texts: Sequence[str], where: str = "") -> Value:
    """A value typed on the command line or in ``GEMWIRE_<KEY>`` (a list's items as several
    texts, or comma-separated, as in ``GEMWIRE_<KEY>``)."""
    where = where or key.name
    if key.type is list:
        return [item.strip() for text in texts for item in text.split(",") if item.strip()]
    if len(texts) != 1:
        raise ConfigFileError(f"{where}: {key.name} takes one value")
    text = texts[0].strip()
    value: Value
    if key.type is bool:
        lowered = text.lower()
        if lowered not in ("true", "false", "1", "0", "yes", "no"):
            raise ConfigFileError(f"{where}: {key.name} must be true or false, not {text!r}")
        value = lowered in ("true", "1", "yes")
    elif key.type is int or key.type is float:
        try:
            value = key.type(text)
        except ValueError as exc:
            what = "a whole number" if key.type is int else "a number"
            raise ConfigFileError(f"{where}: {key.name} must be {what}, not {text!r}") from exc
    else:
        value = texts[0]
    return _check(key, value, where)


def from_environment(environ: Mapping[str, str] = os.environ) -> dict[str, Value]:
    """The settings given as ``GEMWIRE_<KEY>`` variables."""
    values: dict[str, Value] = {}
    for key in KEYS.values():
        text = environ.get(key.env)
        if text is None or text == "":
            continue
        values[key.name] = parse_value(key, [text], where=key.env)
    return values


def effective(
    environ: Mapping[str, str] = os.environ, problems: list[str] | None = None
) -> dict[str, tuple[Value, str]]:
    """Every setting that is set, with where it comes from (the file's path, or the variable).

    What is wrong with the file raises `ConfigFileError`, or is added to ``problems`` if
    given (``gemwire config list`` shows the rest of a file to repair).
    """
    path = config_path(environ)
    if problems is None:
        values = read_config(path)
    else:
        values, found_problems = load_config(path)
        problems += [message for _, message in found_problems]
    found: dict[str, tuple[Value, str]] = {
        name: (value, str(path)) for name, value in values.items()
    }
    for name, value in from_environment(environ).items():
        found[name] = (value, KEYS[name].env)
    return found


def defaults(environ: Mapping[str, str] = os.environ) -> dict[str, Value]:
    """The option defaults for the commands: file, then environment; paths expanded."""
    values: dict[str, Value] = {}
    for name, (value, _) in effective(environ).items():
        if KEYS[name].path:
            value = (
                [os.path.expanduser(v) for v in value]
                if isinstance(value, list)
                else os.path.expanduser(str(value))
            )
        values[name] = value
    return values


def _toml_string(text: str) -> str:
    # A JSON string is a TOML basic string, except that TOML also wants DEL escaped.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_value(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    return "[" + ", ".join(_toml_string(item) for item in value) + "]"


def format_toml(values: Mapping[str, Value]) -> str:
    """The config file for ``values``, keys in the order of `KEYS`.

    >>> print(format_toml({"timeout": 600.0, "model": "flash"}), end="")
    # gemwire settings; change them with `gemwire config set KEY VALUE` (docs/cli.md).
    model = "flash"
    timeout = 600.0
    """
    lines = ["# gemwire settings; change them with `gemwire config set KEY VALUE` (docs/cli.md)."]
    lines += [f"{name} = {_toml_value(values[name])}" for name in KEYS if name in values]
    return "\n".join(lines) + "\n"


def write_config(path: Path, values: Mapping[str, Value]) -> None:
    """Replace the config file with ``values`` (atomically: a reader never sees half of it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".config-", suffix=".toml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(format_toml(values))
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
