"""Ctrl-C before a command watches signals exits 130 too, quietly (not click's "Aborted!")."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

import gemwire.__main__
from gemwire.cli import _Gemwire


def test_ctrl_c_while_a_command_starts_exits_130() -> None:
    @click.group(cls=_Gemwire)
    def group() -> None:
        pass

    @group.command()
    def starting() -> None:  # e.g. importing what it runs, before anyio.run
        raise KeyboardInterrupt

    result = CliRunner().invoke(group, ["starting"])
    assert (result.exit_code, result.output) == (130, "")


def test_ctrl_c_while_the_command_line_loads_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("gemwire.cli.main", interrupted)
    with pytest.raises(SystemExit) as exited:
        gemwire.__main__.main()
    assert exited.value.code == 130
