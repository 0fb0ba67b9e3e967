"""Workspaces stay under the roots: ``..``, symlinks and missing folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gemwire.server.paths import confine, real_roots
from gemwire.server.responses import BadRequest, Forbidden


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    return folder.resolve()


def test_a_folder_under_a_root_is_its_real_path(root: Path) -> None:
    (root / "a" / "b").mkdir(parents=True)
    assert confine(str(root / "a" / "b"), (str(root),)) == str(root / "a" / "b")
    assert confine("a/b", (str(root),)) == str(root / "a" / "b")
    assert confine(None, (str(root),)) == str(root)


def test_dot_dot_out_of_the_root_is_forbidden(root: Path) -> None:
    with pytest.raises(Forbidden, match=r"^'\.\./' is outside the server's roots"):
        confine("../", (str(root),))
    with pytest.raises(Forbidden, match="outside the server's roots"):
        confine(str(root / "a" / ".." / ".."), (str(root),))


def test_a_symlink_out_of_the_root_is_forbidden(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "link").symlink_to(outside)
    with pytest.raises(Forbidden, match="'link' is outside the server's roots"):
        confine("link", (str(root),))


def test_a_root_that_is_a_prefix_of_another_folder_does_not_cover_it(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work2").mkdir()
    with pytest.raises(Forbidden):
        confine(str(tmp_path / "work2"), (str(tmp_path / "work"),))


def test_missing_files_and_nul_bytes_are_bad_requests(root: Path) -> None:
    (root / "file").write_text("x")
    with pytest.raises(BadRequest, match=r"^'nope' does not exist$"):
        confine("nope", (str(root),))
    with pytest.raises(BadRequest, match=r"^'file' is not a folder$"):
        confine("file", (str(root),))
    with pytest.raises(BadRequest, match="NUL"):
        confine("a\0b", (str(root),))


def test_roots_are_real_folders(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "alias")
    assert real_roots([str(tmp_path / "alias"), str(tmp_path / "real")]) == (
        str((tmp_path / "real").resolve()),
    )
    with pytest.raises(BadRequest, match="is not a folder"):
        real_roots([str(tmp_path / "missing")])
