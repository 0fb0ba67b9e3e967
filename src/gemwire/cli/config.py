"""``gemwire config get|set|unset|list|path``: the settings file (see `gemwire.cli.settings`).

Values, paths and problems come from a file or the environment: what is printed of them goes
through `terminal_safe`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import click

from gemwire.cli import settings
from gemwire.cli.safe_text import terminal_safe

__all__ = ("config",)


_REPAIR = "gemwire: `gemwire config set KEY VALUE` or `gemwire config unset KEY` repairs it"


def _key(name: str) -> settings.Key:
    key = settings.KEYS.get(name.replace("-", "_"))
    if key is None:
        raise click.BadParameter(
            f"unknown setting {name!r}; known: {', '.join(settings.KEYS)}", param_hint="KEY"
        )
    return key


def _show(value: settings.Value) -> str:
    if isinstance(value, list):
        return terminal_safe(", ".join(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    return terminal_safe(str(value))


@click.group()
def config() -> None:
    """Defaults for the run options: a TOML file, then GEMWIRE_<KEY> variables, then flags.

    \b
    gemwire config set model flash
    gemwire config set include_directories ~/notes ~/specs
    gemwire config list
    """


@config.command()
def path() -> None:
    """Print where the config file is ($GEMWIRE_CONFIG, else the XDG config folder)."""
    click.echo(terminal_safe(str(settings.config_path())))


@config.command(name="list")
def list_() -> None:
    """Every setting: its value and where it comes from (exit 2 if the file is broken)."""
    problems: list[str] = []
    found = settings.effective(problems=problems)
    width = max(len(name) for name in settings.KEYS)
    for name, key in settings.KEYS.items():
        if name in found:
            value, source = found[name]
            click.echo(f"{name:<{width}}  {_show(value)}  ({terminal_safe(source)})")
        else:
            click.echo(f"{name:<{width}}  -  ({key.help})")
    for problem in problems:
        click.echo(terminal_safe(f"gemwire: {problem}"), err=True)
    if problems:
        click.echo(_REPAIR, err=True)
        raise SystemExit(2)


@config.command()
@click.argument("name", metavar="KEY")
def get(name: str) -> None:
    """Print the value of KEY (exit 1 when it is not set)."""
    key = _key(name)
    found = settings.effective()
    if key.name not in found:
        raise SystemExit(1)
    click.echo(_show(found[key.name][0]))


def _repair(path: Path, values: dict[str, settings.Value], problems: list[str]) -> None:
    """Write ``values``; what could not be kept is named, and the old file kept beside it."""
    if problems:
        backup = path.with_name(path.name + ".bak")
        shutil.copyfile(path, backup)
        for problem in problems:
            click.echo(terminal_safe(f"gemwire: dropped from the config file: {problem}"), err=True)
        click.echo(terminal_safe(f"gemwire: the file as it was is in {backup}"), err=True)
    settings.write_config(path, values)


@config.command(name="set")
@click.argument("name", metavar="KEY")
@click.argument("values", metavar="VALUE...", nargs=-1, required=True)
def set_(name: str, values: tuple[str, ...]) -> None:
    """Set KEY in the config file (list settings take several values, or a,b).

    A broken file is repaired: what cannot be kept is named, and the old file kept
    as config.toml.bak.
    """
    key = _key(name)
    value = settings.parse_value(key, values)
    path = settings.config_path()
    current, problems = settings.load_config(path)
    current[key.name] = value
    _repair(path, current, [message for where, message in problems if where != key.name])


@config.command()
@click.argument("name", metavar="KEY")
def unset(name: str) -> None:
    """Remove KEY from the config file (also a key gemwire does not know, or a bad value)."""
    path = settings.config_path()
    current, problems = settings.load_config(path)
    name = name.replace("-", "_")
    unreadable = any(where is None for where, _ in problems)
    if name not in current and all(where != name for where, _ in problems) and not unreadable:
        _key(name)  # an unknown name that is not in the file either is a typo
        return
    current.pop(name, None)
    _repair(path, current, [message for where, message in problems if where != name])
