"""The ``gemwire`` command line (``pip install 'gemwire[cli]'``); the only layer importing click.

Commands live in modules of their own and are registered here with ``main.add_command``.
They import only click and the standard library at module level, and everything else
(rich, anyio, the runners) inside the command, so ``gemwire --help`` stays fast
(bench/cli_startup.py). Exit statuses: `gemwire.cli.exit_codes` and docs/cli.md.
"""

from __future__ import annotations

import click

from gemwire import __version__
from gemwire.cli.acp import acp
from gemwire.cli.batch import batch
from gemwire.cli.config import config
from gemwire.cli.demo import demo
from gemwire.cli.doctor import doctor
from gemwire.cli.exit_codes import (
    EXIT_CANCELLED,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_PROTOCOL,
    EXIT_TIMEOUT,
    EXIT_TURN_FAILED,
)
from gemwire.cli.replay import replay
from gemwire.cli.run import run
from gemwire.cli.sessions import sessions

# The EXIT_* names stay importable from here, where they used to live.
__all__ = (
    "EXIT_CANCELLED",
    "EXIT_NOT_FOUND",
    "EXIT_OK",
    "EXIT_PROTOCOL",
    "EXIT_TIMEOUT",
    "EXIT_TURN_FAILED",
    "main",
)

_WITHOUT_DEFAULTS = frozenset({"config", "doctor"})
"""Commands that must work with a broken config file (they report or repair it)."""


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gemwire")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Run Gemini CLI and ACP agents headlessly; one normalized event stream.

    \b
    gemwire demo                  see it work, offline, in a few seconds
    gemwire run -y "fix the failing test"
    gemwire doctor                what will bite a headless run here
    """
    command = ctx.invoked_subcommand
    if command is None or command in _WITHOUT_DEFAULTS:
        return
    from gemwire.cli.settings import defaults

    # click takes option defaults from default_map: file < GEMWIRE_* < flags.
    params = {p.name for p in main.commands[command].params if p.name}
    ctx.default_map = {
        command: {name: value for name, value in defaults().items() if name in params}
    }


main.add_command(run)
main.add_command(replay)
main.add_command(demo)
main.add_command(doctor)
main.add_command(config)
main.add_command(sessions)
main.add_command(acp)
main.add_command(batch)
