"""``gemwire doctor``: what will bite a headless run here, each finding with its fix."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from gemwire.checks import Check

__all__ = ("checks_json", "doctor", "run_checks")

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


def _config_file(environ: dict[str, str]) -> Check:
    """gemwire's own settings file: where it is, and whether it loads."""
    from gemwire.checks import Check
    from gemwire.cli.settings import ConfigFileError, config_path, effective

    path = config_path(environ)
    try:
        found = effective(environ)
    except ConfigFileError as exc:
        fix = "`gemwire config set KEY VALUE` or `gemwire config unset KEY` repairs it"
        return Check(name="gemwire config", status="fail", summary=exc.message, fix=fix)
    summary = f"{path} (none yet)" if not path.exists() else str(path)
    details = tuple(f"{name} = {value!r} ({source})" for name, (value, source) in found.items())
    return Check(name="gemwire config", status="ok", summary=summary, details=details)


def run_checks(
    *, cwd: Path, executable: str | None, gemini_home: str | None, environ: dict[str, str]
) -> list[Check]:
    """gemwire's config, then `check_gemini_environment` with the executable and home the
    flags or the config name; in a checkout, a missing CLI's fix names the pinned one."""
    import msgspec

    from gemwire.checks import check_gemini_environment
    from gemwire.cli import settings

    config = _config_file(environ)
    configured: dict[str, settings.Value] = {}
    if config.status != "fail":
        configured = settings.defaults(environ)
    found = check_gemini_environment(
        cwd,
        executable=executable or str(configured.get("executable") or "") or None,
        gemini_home=gemini_home or str(configured.get("gemini_home") or "") or None,
        environ=environ,
    )
    return [config] + [
        msgspec.structs.replace(check, fix=_pinned_fix())
        if check.name == "Gemini CLI" and check.status == "fail"
        else check
        for check in found
    ]


def checks_json(checks: list[Check]) -> bytes:
    """``doctor --json``: one document, ``ok`` false when a check failed (docs/cli.md).

    >>> from gemwire.checks import Check
    >>> print(checks_json([Check(name="auth", status="warn", summary="none")]).decode(), end="")
    {"ok":true,"checks":[{"name":"auth","status":"warn","summary":"none","details":[],"fix":null}]}
    """
    import msgspec

    ok = all(check.status != "fail" for check in checks)
    return msgspec.json.encode({"ok": ok, "checks": checks}) + b"\n"


def _show(checks: list[Check]) -> None:
    """The checks for a person: a mark and a line each, the details, the fix."""
    from rich.console import Console
    from rich.text import Text

    from gemwire.cli.safe_text import terminal_safe

    console = Console(highlight=False)
    width = max(len(check.name) for check in checks)
    for check in checks:
        mark, style = _MARKS[check.status]
        console.print(
            Text.assemble((f"{mark} ", f"bold {style}"), (f"{check.name:<{width}}", "bold"), "  ")
            + Text(terminal_safe(check.summary)),  # paths and config values: inert
            soft_wrap=True,
        )
        for detail in check.details:
            line = f"  {'':<{width}}  {terminal_safe(detail)}"
            console.print(Text(line, style="dim"), soft_wrap=True)
        if check.fix and check.status != "ok":
            console.print(
                Text.assemble(
                    f"  {'':<{width}}  ", ("fix: ", f"bold {style}"), terminal_safe(check.fix)
                ),
                soft_wrap=True,
            )


@click.command()
@click.option("--cwd", type=click.Path(file_okay=False), help="The workspace to check (here).")
@click.option("--executable", help="Check this gemini instead of the one found.")
@click.option("--gemini-home", help="Check this home (GEMINI_CLI_HOME) instead.")
@click.option("--json", "as_json", is_flag=True, help="The checks as one JSON document.")
def doctor(cwd: str | None, executable: str | None, gemini_home: str | None, as_json: bool) -> None:
    """Check what will bite a headless run here: the Gemini CLI, Node.js, auth, folder trust,
    session retention and the Gemini home; then the built-in ACP agents (installed, version,
    credentials). Exits 1 when something fails.

    Secrets are never printed, only where they are set.
    """
    from gemwire.checks import check_agents

    where = Path(cwd or os.getcwd()).resolve()
    found = run_checks(
        cwd=where, executable=executable, gemini_home=gemini_home, environ=dict(os.environ)
    )
    found += check_agents(where)
    if as_json:
        sys.stdout.buffer.write(checks_json(found))
        sys.stdout.buffer.flush()
    else:
        _show(found)
    sys.exit(1 if any(check.status == "fail" for check in found) else 0)
