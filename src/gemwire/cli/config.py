"""``gemwire config get|set|unset|list|path``: the settings file (see `gemwire.cli.settings`)."""

from __future__ import annotations

import click

from gemwire.cli import settings

__all__ = ("config",)


def _key(name: str) -> settings.Key:
    key = settings.KEYS.get(name.replace("-", "_"))
    if key is None:
        raise click.BadParameter(
            f"unknown setting {name!r}; known: {', '.join(settings.KEYS)}", param_hint="KEY"
        )
    return key


def _show(value: settings.Value) -> str:
    if isinstance(value, list):
        return ", ".join(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


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
    click.echo(settings.config_path())


@config.command(name="list")
def list_() -> None:
    """Every setting: its value and where it comes from."""
    found = settings.effective()
    width = max(len(name) for name in settings.KEYS)
    for name, key in settings.KEYS.items():
        if name in found:
            value, source = found[name]
            click.echo(f"{name:<{width}}  {_show(value)}  ({source})")
        else:
            click.echo(f"{name:<{width}}  -  ({key.help})")


@config.command()
@click.argument("name", metavar="KEY")
def get(name: str) -> None:
    """Print the value of KEY (exit 1 when it is not set)."""
    key = _key(name)
    found = settings.effective()
    if key.name not in found:
        raise SystemExit(1)
    click.echo(_show(found[key.name][0]))


@config.command(name="set")
@click.argument("name", metavar="KEY")
@click.argument("values", metavar="VALUE...", nargs=-1, required=True)
def set_(name: str, values: tuple[str, ...]) -> None:
    """Set KEY in the config file (list settings take several values)."""
    key = _key(name)
    value = settings.parse_value(key, values)
    path = settings.config_path()
    current = settings.read_config(path)
    current[key.name] = value
    settings.write_config(path, current)


@config.command()
@click.argument("name", metavar="KEY")
def unset(name: str) -> None:
    """Remove KEY from the config file."""
    key = _key(name)
    path = settings.config_path()
    current = settings.read_config(path)
    if current.pop(key.name, None) is not None:
        settings.write_config(path, current)
