"""Where ``gemwire serve`` keeps session logs by default, per OS."""

from __future__ import annotations

from pathlib import Path

import pytest

from gemwire.server.config import default_state_dir

LOCAL = r"C:\Users\me\AppData\Local"


def test_windows_keeps_them_in_local_app_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setenv("LOCALAPPDATA", LOCAL)
    assert default_state_dir("win32") == str(Path(LOCAL) / "gemwire" / "server")


def test_elsewhere_in_the_xdg_state_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setenv("LOCALAPPDATA", LOCAL)  # set or not, only Windows reads it
    monkeypatch.setenv("HOME", "/home/me")
    assert default_state_dir("darwin") == "/home/me/.local/state/gemwire/server"
    monkeypatch.setenv("XDG_STATE_HOME", "/state")
    assert default_state_dir("linux") == default_state_dir("win32") == "/state/gemwire/server"
