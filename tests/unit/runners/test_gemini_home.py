"""A run's own Gemini home (runners/_gemini_home.py): the user's settings with the run's MCP
servers, links to the rest, and what the CLI wrote brought back."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from gemwire.errors import GemwireError, InvalidOptions
from gemwire.runners._gemini_home import RunHome, settings_servers
from gemwire.wire.acp import HttpHeader, McpServerSse, McpServerStdio

SERVER = {"given": {"command": "tiny", "args": [], "env": {}, "cwd": "/w"}}


def user_home(tmp_path: Path, settings: object) -> Path:
    gemini = tmp_path / "home" / ".gemini"
    gemini.mkdir(parents=True)
    (gemini / "settings.json").write_text(json.dumps(settings))
    return gemini.parent


def test_the_servers_join_the_user_settings_and_replace_one_of_the_same_name(
    tmp_path: Path,
) -> None:
    settings = {
        "general": {"maxAttempts": 1},
        "mcpServers": {"own": {"command": "x"}, "given": {"command": "old"}},
    }
    home = RunHome(user_home(tmp_path, settings), SERVER)
    seen = json.loads((home.path / ".gemini" / "settings.json").read_text())
    home.close()
    assert seen == {
        "general": {"maxAttempts": 1},
        "mcpServers": {"own": {"command": "x"}, **SERVER},
    }
    assert json.loads((tmp_path / "home" / ".gemini" / "settings.json").read_text()) == settings


def test_what_the_cli_creates_or_replaces_goes_back_and_the_registry_is_merged(
    tmp_path: Path,
) -> None:
    user = user_home(tmp_path, {})
    registry = user / ".gemini" / "projects.json"
    registry.write_text(json.dumps({"projects": {"/a": "a"}}))
    (user / ".gemini" / "oauth_creds.json").write_text("old")
    home = RunHome(user, SERVER)
    own = home.path / ".gemini"
    assert sorted(p.name for p in own.iterdir() if p.is_symlink()) == [
        "history",
        "oauth_creds.json",
        "projects.json",
        "tmp",
    ]
    (own / "tmp" / "session.jsonl").write_text("through the link")
    (own / "installation_id").write_text("new")  # created
    (own / "projects.json").unlink()  # replaced, as the CLI renames a new registry in
    (own / "projects.json").write_text(json.dumps({"projects": {"/a": "x", "/b": "b"}}))
    registry.write_text(json.dumps({"projects": {"/a": "a", "/c": "c"}}))  # another run's
    (own / "projects.json.1234.tmp").write_text("unfinished")
    home.close()
    assert not home.path.exists()
    assert (user / ".gemini" / "tmp" / "session.jsonl").read_text() == "through the link"
    assert (user / ".gemini" / "installation_id").read_text() == "new"
    assert json.loads(registry.read_text()) == {"projects": {"/a": "a", "/b": "b", "/c": "c"}}
    assert sorted(p.name for p in (user / ".gemini").iterdir()) == [
        "history",
        "installation_id",
        "oauth_creds.json",
        "projects.json",
        "settings.json",
        "tmp",
    ]


def test_a_home_with_no_gemini_folder_gets_its_sessions(tmp_path: Path) -> None:
    home = RunHome(tmp_path / "fresh", SERVER)
    (home.path / ".gemini" / "tmp" / "s").write_text("saved")
    home.close()
    assert (tmp_path / "fresh" / ".gemini" / "tmp" / "s").read_text() == "saved"
    assert not (tmp_path / "fresh" / ".gemini" / "settings.json").exists()


@pytest.mark.parametrize(
    ("text", "problem"),
    [('{"a": 1, // comment\n}', "is not plain JSON"), ("[1]", "is not a JSON object")],
)
def test_settings_that_cannot_be_merged_are_refused(
    tmp_path: Path, text: str, problem: str
) -> None:
    gemini = tmp_path / ".gemini"
    gemini.mkdir()
    (gemini / "settings.json").write_text(text)
    with pytest.raises(InvalidOptions, match=problem):
        RunHome(tmp_path, SERVER)
    assert [p.name for p in gemini.iterdir()] == ["settings.json"]


def test_servers_are_mapped_as_gemini_maps_acp_ones() -> None:
    sse = McpServerSse(name="s", url="http://x/sse", headers=[HttpHeader(name="A", value="b")])
    stdio = McpServerStdio(name="t", command="tiny")
    assert settings_servers([sse, stdio], "/w") == {
        "s": {"url": "http://x/sse", "headers": {"A": "b"}},
        "t": {"command": "tiny", "args": [], "env": {}, "cwd": "/w"},
    }


def test_a_home_that_cannot_be_made_is_a_clear_error_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = user_home(tmp_path, {})
    made = tmp_path / "made"
    made.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(made))

    def refused(self: Path, target: Path) -> None:
        raise OSError(1, "symbolic links are not allowed")

    monkeypatch.setattr(Path, "symlink_to", refused)
    with pytest.raises(
        GemwireError,
        match=r"cannot make the run's own Gemini home for its MCP servers: .*not allowed",
    ):
        RunHome(user, SERVER)
    assert list(made.iterdir()) == []


def test_a_folder_another_run_made_meanwhile_is_kept(tmp_path: Path) -> None:
    user = user_home(tmp_path, {})
    home = RunHome(user, SERVER)
    (home.path / ".gemini" / "acknowledgments").mkdir()
    (home.path / ".gemini" / "acknowledgments" / "agents.json").write_text("this run's")
    (user / ".gemini" / "acknowledgments").mkdir()  # another run's, made after this one began
    (user / ".gemini" / "acknowledgments" / "agents.json").write_text("the other run's")
    (home.path / ".gemini" / "installation_id").write_text("id")
    home.close()
    assert (user / ".gemini" / "acknowledgments" / "agents.json").read_text() == "the other run's"
    assert (user / ".gemini" / "installation_id").read_text() == "id"
    assert not home.path.exists()
