"""`isolated_agent` leaves nothing behind when it cannot be made, and makes homes the agents
do no needless work in."""

from __future__ import annotations

import json
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


def test_opencode_finds_its_plugin_package_installed(tmp_path: Path) -> None:
    """OpenCode 1.18.33 installs @opencode-ai/plugin from the npm registry into a config
    folder (in the background, again for each directory it opens) unless the folder has a
    node_modules and a package-lock.json whose root lists every dependency package.json
    names, and this one: its check (Npm.install), on the folder the home gives it."""
    with ScriptedModel(Scenario(turns=[])) as model:
        env = isolated_agent("opencode", model, root=tmp_path, command=("opencode", "acp"))
    folder = env.home / ".config" / "opencode"
    wanted = set(json.loads((folder / "package.json").read_text())["dependencies"])
    lock = json.loads((folder / "package-lock.json").read_text())
    assert wanted | {"@opencode-ai/plugin"} <= set(lock["packages"][""]["dependencies"])
    assert (folder / "node_modules").is_dir()
    assert env.environ()["XDG_CONFIG_HOME"] == str(env.home / ".config")
