"""The ``gemwire`` command line (the ``cli`` extra); the only layer importing click.

Commands live in modules of their own and are registered here with ``main.add_command``.
They import only click and the standard library at module level, and everything else
(rich, anyio, the runners) inside the command, so ``gemwire --help`` stays fast
(bench/cli_startup.py). Exit statuses: `gemwire.cli.exit_codes` and docs/cli.md. The
``gemwire`` script is `gemwire.__main__.main`, which says how to install the extra if it is
missing.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

import click

from gemwire import __version__
from gemwire.cli.acp import acp
from gemwire.cli.agent import agent
from gemwire.cli.batch import batch
from gemwire.cli.config import config
from gemwire.cli.demo import demo
from gemwire.cli.doctor import doctor
from gemwire.cli.eval import eval_
from gemwire.cli.exit_codes import (
    EXIT_BROKEN_PIPE,
    EXIT_CANCELLED,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_PROTOCOL,
    EXIT_TIMEOUT,
    EXIT_TURN_FAILED,
)
from gemwire.cli.replay import replay
from gemwire.cli.run import run
from gemwire.cli.serve import serve
from gemwire.cli.sessions import sessions
from gemwire.cli.usage import usage

# The EXIT_* names stay importable from here, where they used to live.
__all__ = (
    "EXIT_BROKEN_PIPE",
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


def _broken_pipe(exc: BaseException) -> bool:
    """Whether ``exc`` is only the reader of stdout having gone away (``gemwire run | head``)."""
    if isinstance(exc, BaseExceptionGroup):  # raised inside a run's task group
        return all(_broken_pipe(inner) for inner in exc.exceptions)
    if isinstance(exc, SystemExit):  # rich's Console exits 1 on a broken pipe
        return isinstance(exc.__context__, BrokenPipeError)
    return isinstance(exc, BrokenPipeError)


class _Gemwire(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            # Ctrl-C before the command watched signals (`cli.signals`): as after, 130,
            # not click's "Aborted!" and 1.
            ctx.exit(EXIT_CANCELLED)
        except BaseException as exc:
            if not _broken_pipe(exc):
                raise
            # As Unix tools do: stop quietly (a run left early has stopped its CLI). Python
            # would flush stdout again at exit and complain, so stdout goes to /dev/null.
            with contextlib.suppress(OSError, ValueError):  # a test's captured output
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            ctx.exit(EXIT_BROKEN_PIPE)


@click.group(cls=_Gemwire, context_settings={"help_option_names": ["-h", "--help"]})
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
    try:
        os.getcwd()
    except FileNotFoundError:  # every command resolves paths against it
        raise click.ClickException(
            "the current folder no longer exists (removed while this shell was in it); "
            "cd to one that does"
        ) from None
    if command is None or command in _WITHOUT_DEFAULTS:
        return
    from gemwire.cli.settings import defaults

    # click takes option defaults from default_map: file < GEMWIRE_* < flags. A group's
    # (``batch``) are its subcommands' own.
    settings = defaults()

    def chosen(cmd: click.Command) -> dict[str, Any]:
        if isinstance(cmd, click.Group):
            return {name: chosen(sub) for name, sub in cmd.commands.items()}
        params = {p.name for p in cmd.params if p.name}
        return {name: value for name, value in settings.items() if name in params}

    ctx.default_map = {command: chosen(main.commands[command])}


main.add_command(run)
main.add_command(replay)
main.add_command(demo)
main.add_command(doctor)
main.add_command(config)
main.add_command(sessions)
main.add_command(acp)
main.add_command(agent)
main.add_command(batch)
main.add_command(eval_)
main.add_command(usage)
main.add_command(serve)
