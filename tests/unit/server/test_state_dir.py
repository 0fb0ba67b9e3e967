"""``gemwire serve`` refuses a state folder inside a root: an agent working there could edit
the server's ``session.json`` and ``batch.json`` files (their folders, their permissions)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from gemwire.cli import main


@pytest.mark.parametrize("state", ["state", "deep/er/state", "."])
def test_a_state_dir_inside_a_root_is_refused(tmp_path: Path, state: str) -> None:
    root = tmp_path.resolve() / "root"
    root.mkdir()
    result = CliRunner().invoke(
        main,
        ["serve", "--root", str(tmp_path), "--root", str(root), "--state-dir", str(root / state)],
    )
    assert result.exit_code == 2
    real = os.path.realpath(root / state)
    assert (
        f"the state folder {real} lies inside the root {tmp_path.resolve()}: an agent working "
        "there could edit the server's sessions and batches; give a --state-dir outside every "
        "--root" in " ".join(result.output.split())
    )
    assert not (root / state / "sessions").exists()


def test_the_default_state_dir_inside_a_root_is_refused_too(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["serve", "--root", str(tmp_path)], env={"XDG_STATE_HOME": str(tmp_path / "xdg")}
    )
    assert result.exit_code == 2
    assert "give a --state-dir outside every --root" in " ".join(result.output.split())


def test_a_state_dir_reached_through_a_symlink_is_judged_by_its_real_path(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "hidden").mkdir(parents=True)
    (tmp_path / "link").symlink_to(root / "hidden")
    result = CliRunner().invoke(
        main, ["serve", "--root", str(root), "--state-dir", str(tmp_path / "link" / "state")]
    )
    assert result.exit_code == 2
    assert "lies inside the root" in result.output
