from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gemwire.testing import FAKE_API_KEY, IsolatedGemini, environment


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
    assert environ["GEMINI_CLI_NO_RELAUNCH"] == "1"
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
    # Python, not /bin/sleep: macOS withholds the environment of Apple's own programs.
    script = "import sys; print('started', flush=True); sys.stdin.read()"
    with subprocess.Popen(
        [sys.executable, "-c", script],
        env=env.environ(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    ) as child:
        assert child.stdout is not None
        assert child.stdout.readline() == b"started\n"  # running, as exec'd with that env
        # settle=0: a live process is the answer here, not a process still exiting.
        assert env.live_processes(settle=0) == [child.pid]
        assert other.live_processes() == []
    assert env.live_processes() == []


def test_where_the_os_shows_no_environments_live_processes_raises() -> None:
    # Finding nothing there would make every leak check pass.
    with pytest.raises(NotImplementedError, match="win32 shows no other process's environment"):
        environment._processes("GEMINI_CLI_HOME=/h", "win32")
