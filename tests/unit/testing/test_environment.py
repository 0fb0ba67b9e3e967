from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from gemwire.testing import FAKE_API_KEY, IsolatedGemini


def test_home_settings_workspace_and_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "a-real-secret")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "real-project")
    monkeypatch.setenv("GEMINI_MODEL", "pro")
    monkeypatch.setenv("KEEP_ME", "1")
    env = IsolatedGemini(
        "http://127.0.0.1:9",
        files={"src/a.py": "a = 1\n"},
        settings={"general": {"maxAttempts": 2}, "model": {"maxSessionTurns": 3}},
        root=tmp_path,
    )
    assert env.home == tmp_path.resolve() / "home"
    assert env.workspace == tmp_path.resolve() / "workspace"
    assert (env.workspace / "src/a.py").read_text() == "a = 1\n"
    settings = json.loads(env.settings_path.read_text())
    assert settings["security"] == {"auth": {"selectedType": "gemini-api-key"}}
    assert settings["general"]["maxAttempts"] == 2
    assert settings["general"]["sessionRetention"] == {"enabled": False}
    assert settings["general"]["enableAutoUpdate"] is False
    assert settings["model"] == {"maxSessionTurns": 3}
    assert settings["telemetry"] == {"enabled": False}

    environ = env.environ({"EXTRA": "x"})
    assert environ["HOME"] == environ["GEMINI_CLI_HOME"] == str(env.home)
    assert environ["GEMINI_API_KEY"] == FAKE_API_KEY
    assert environ["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:9"
    assert environ["GEMINI_CLI_TRUST_WORKSPACE"] == "true"
    assert environ["TMPDIR"] == str(tmp_path.resolve() / "tmp")
    assert (tmp_path / "tmp").is_dir()
    assert environ["KEEP_ME"] == "1"
    assert environ["EXTRA"] == "x"
    assert "GOOGLE_CLOUD_PROJECT" not in environ
    assert "GEMINI_MODEL" not in environ
    assert "a-real-secret" not in environ.values()


def test_a_temporary_root_is_removed_on_exit_and_a_given_root_is_kept(tmp_path: Path) -> None:
    with IsolatedGemini("http://127.0.0.1:9") as env:
        root = env.root
        assert root.is_dir()
    assert not root.exists()
    with IsolatedGemini("http://127.0.0.1:9", root=tmp_path) as env:
        pass
    assert env.workspace.is_dir()


def test_session_files_lists_what_the_cli_wrote(tmp_path: Path) -> None:
    env = IsolatedGemini("http://127.0.0.1:9", root=tmp_path)
    chats = env.gemini_dir / "tmp" / "workspace" / "chats"
    (chats / "parent-id").mkdir(parents=True)
    (chats / "session-b.jsonl").write_text("{}\n")
    (chats / "parent-id" / "sub.jsonl").write_text("{}\n")
    assert env.session_files() == [chats / "parent-id" / "sub.jsonl", chats / "session-b.jsonl"]


def test_live_processes_finds_what_runs_in_the_environment(tmp_path: Path) -> None:
    env = IsolatedGemini("http://127.0.0.1:9", root=tmp_path)
    other = IsolatedGemini("http://127.0.0.1:9", root=tmp_path / "other")
    child = subprocess.Popen(["sleep", "30"], env=env.environ())
    try:
        # Until the child has exec'd, /proc shows the environment it was forked with.
        cmdline = Path(f"/proc/{child.pid}/cmdline")
        deadline = time.monotonic() + 10
        while cmdline.read_bytes() != b"sleep\x0030\x00" and time.monotonic() < deadline:
            time.sleep(0.01)
        # settle=0: a live process is the answer here, not a process still exiting.
        assert env.live_processes(settle=0) == [child.pid]
        assert other.live_processes() == []
    finally:
        child.kill()
        child.wait()
    assert env.live_processes() == []
