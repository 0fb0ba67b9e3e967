"""The click options and value types several commands share, defined once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

__all__ = ("AGENT_NAMES", "COUNT", "SECONDS", "approval_options", "output_options")

F = TypeVar("F", bound=Callable[..., Any])

AGENT_NAMES = click.Choice(["claude", "codex", "qwen", "opencode", "gemini"])
"""`gemwire.runners.agents.AGENTS`, spelled out: importing the runners here would slow every
command (tests/unit/runners/test_agents.py checks they agree)."""
SECONDS = click.FloatRange(min=0, min_open=True)
COUNT = click.IntRange(min=0)


def output_options(command: F) -> F:
    """``--json``, ``--quiet`` and ``--verbose``: the outputs every streaming command offers."""
    for option in reversed(
        (
            click.option(
                "--json", "as_json", is_flag=True, help="Print normalized events as JSON lines."
            ),
            click.option("-q", "--quiet", is_flag=True, help="Print only the final answer."),
            click.option("-v", "--verbose", is_flag=True, help="Show every line of tool output."),
        )
    ):
        command = option(command)
    return command


def approval_options(what: str) -> Callable[[F], F]:
    """``--approval-mode`` (``what`` is its help) and ``-y`` / ``--yolo``, its shorthand."""

    def add(command: F) -> F:
        command = click.option("-y", "--yolo", is_flag=True, help="Same as --approval-mode yolo.")(
            command
        )
        modes = click.Choice(["default", "auto_edit", "yolo", "plan"])
        return click.option("--approval-mode", type=modes, help=what)(command)

    return add
