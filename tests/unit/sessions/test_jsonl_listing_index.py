"""The listing index for the agents whose sessions are JSON lines (Claude Code, Codex, Qwen
Code), as for Gemini's: a warm listing reads no file, and lists what reading every file lists;
a file appended to, rewritten or deleted is listed as it now is."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from kit.jsonl_agents import JSONL_AGENTS, JsonlAgent, materialize

from gemwire.sessions import _index, _jsonl_home


@pytest.fixture(autouse=True)
def index_every_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """The recordings are a few sessions; these tests are about the index."""
    monkeypatch.setattr(_index, "INDEXED_FROM", 1)


def read_nothing() -> Any:
    return mock.patch.object(_jsonl_home, "read_jsonl_info", side_effect=AssertionError("read"))


@pytest.mark.parametrize("spec", JSONL_AGENTS, ids=str)
def test_a_warm_listing_reads_nothing_and_lists_the_same(spec: JsonlAgent, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    files = materialize(spec, tmp_path / "home", workspace)
    cold = spec.home(tmp_path / "home").all_sessions()
    assert len(cold) == len(files)
    with read_nothing():
        assert spec.home(tmp_path / "home").all_sessions() == cold
        assert spec.home(tmp_path / "home").sessions(workspace) == cold

    changed = files[0]
    text = changed.read_text()
    changed.write_text(text + text.splitlines()[-1] + "\n")  # appended: one record more
    rewritten = files[1]
    rewritten.unlink()
    rewritten.write_text(files[2].read_text())  # same size, new inode
    files[3].unlink()
    warm = spec.home(tmp_path / "home").all_sessions()
    with mock.patch.object(_index, "INDEXED_FROM", 10**9):  # no index: every file read
        fresh = spec.home(tmp_path / "home").all_sessions()
    assert warm == fresh
    assert str(files[3]) not in {info.path for info in warm}
