"""The click options and value types several commands share, defined once."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

__all__ = (
    "AGENT_NAMES",
    "COUNT",
    "SECONDS",
    "LazyChoice",
    "approval_options",
    "output_options",
)

F = TypeVar("F", bound=Callable[..., Any])


class LazyChoice(click.Choice[str]):
    """A `click.Choice` whose choices come from the library's own registry, read when first
    needed (a value to check, a command's help): importing the registry (the runners, the
    sessions stack) for every command would slow ``gemwire --help``."""

    def __init__(self, choices: Callable[[], Sequence[str]]) -> None:  # no super(): lazy
        self._read = choices
        self.case_sensitive = True

    @functools.cached_property
    def choices(self) -> Sequence[str]:  # type: ignore[override]
        return tuple(self._read())


def _runner_agents() -> Sequence[str]:
    from gemwire.runners.agents import AGENTS

    return tuple(AGENTS)


AGENT_NAMES = LazyChoice(_runner_agents)
"""The built-in ACP agents (`gemwire.runners.agents.AGENTS`)."""
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
