"""`isolated_agent` leaves nothing behind when it cannot be made."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from gemwire.errors import AgentNotFound
from gemwire.runners.agents import AGENTS
from gemwire.testing import Scenario, ScriptedModel
from gemwire.testing.agents import isolated_agent


def test_an_agent_that_is_not_installed_leaves_no_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nowhere = tmp_path / "nowhere"
    temporary = tmp_path / "tmp"
    nowhere.mkdir()
    temporary.mkdir()
    monkeypatch.setenv("GEMWIRE_CLIS_DIR", str(nowhere))
    monkeypatch.setenv("PATH", str(nowhere))
    monkeypatch.delenv(AGENTS["claude"].configured_env, raising=False)
    monkeypatch.chdir(nowhere)
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))  # where mkdtemp makes the root
    with ScriptedModel(Scenario(turns=[])) as model, pytest.raises(AgentNotFound):
        isolated_agent("claude", model)
    assert list(temporary.iterdir()) == []
