"""``gemwire doctor``: what will bite a headless run here, each finding with its fix."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from gemwire.cli.checks import Check

__all__ = ("doctor", "run_checks")

_MARKS = {"ok": ("✓", "green"), "warn": ("!", "yellow"), "fail": ("✗", "red")}


def _pinned_fix() -> str | None:
    """In a gemwire checkout, how to run the CLI `make demo` installed (it is not on PATH)."""
    from gemwire.errors import GemwireError
    from gemwire.testing.pinned import pinned_gemini

    try:
        launcher = pinned_gemini()
    except GemwireError:
        return None
    return (
        f"use the Gemini CLI `make demo` installed: export GEMINI_CLI_PATH={launcher} "
        f"(or `gemwire config set executable {launcher}`)"
    )


def run_checks(
    *, cwd: Path, executable: str | None, gemini_home: str | None, environ: dict[str, str]
) -> list[Check]:
    """Every check, in the order a person fixes things: config, CLI, Node, home, auth, trust."""
    from gemwire.cli import checks, settings

    config = checks.config_file(environ)
    configured: dict[str, settings.Value] = {}
    if config.status != "fail":
        configured = settings.defaults(environ)
    executable = executable or str(configured.get("executable") or "") or None
    cli, launcher = checks.gemini_cli(executable, cwd)
    if launcher is None:
        cli = dataclasses.replace(cli, fix=_pinned_fix())
    if gemini_home or configured.get("gemini_home"):
        home, source = Path(gemini_home or str(configured["gemini_home"])), "gemwire config"
        if gemini_home:
            source = "--gemini-home"
    elif environ.get("GEMINI_CLI_HOME"):
        home, source = Path(environ["GEMINI_CLI_HOME"]), "GEMINI_CLI_HOME"
    else:
        home, source = Path(os.path.expanduser("~")), "the user's home"
    return [
        config,
        cli,
        checks.node(launcher, environ),
        checks.gemini_home(home, source),
        checks.auth(home, cwd, environ),
        checks.trust(home, cwd, environ),
        checks.retention(home, cwd),
    ]


@click.command()
@click.option("--cwd", type=click.Path(file_okay=False), help="The workspace to check (here).")
@click.option("--executable", help="Check this gemini instead of the one found.")
@click.option("--gemini-home", help="Check this home (GEMINI_CLI_HOME) instead.")
def doctor(cwd: str | None, executable: str | None, gemini_home: str | None) -> None:
    """Check what will bite a headless run here: the Gemini CLI, Node.js, auth, folder trust,
    session retention and the Gemini home; then the built-in ACP agents (installed, version,
    credentials). Exits 1 when something fails.

    Secrets are never printed, only where they are set.
    """
    from rich.console import Console
    from rich.text import Text

    console = Console(highlight=False)
    from gemwire.cli.agent_checks import agent_checks

    where = Path(cwd or os.getcwd()).resolve()
    found = run_checks(
        cwd=where, executable=executable, gemini_home=gemini_home, environ=dict(os.environ)
    )
    found += agent_checks(where, Path(os.path.expanduser("~")), os.environ)
    width = max(len(check.name) for check in found)
    for check in found:
        mark, style = _MARKS[check.status]
        console.print(
            Text.assemble((f"{mark} ", f"bold {style}"), (f"{check.name:<{width}}", "bold"), "  ")
            + Text(check.summary),
            soft_wrap=True,
        )
        for detail in check.details:
            console.print(Text(f"  {'':<{width}}  {detail}", style="dim"), soft_wrap=True)
        if check.fix and check.status != "ok":
            console.print(
                Text.assemble(f"  {'':<{width}}  ", ("fix: ", f"bold {style}"), check.fix),
                soft_wrap=True,
            )
    sys.exit(1 if any(check.status == "fail" for check in found) else 0)
