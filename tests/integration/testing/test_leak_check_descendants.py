"""The leak check (`Isolated.live_processes`) counts what a process of the environment
started even when it cleared its environment (``env -i``) and left for a session of its
own: on Linux as on macOS, a descendant of a tagged process is one of the environment's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kit.waiting import eventually_blocking

from gemwire.testing import IsolatedGemini

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="no environments to read")


@pytest.fixture
def env(tmp_path: Path) -> Iterator[IsolatedGemini]:
    with IsolatedGemini("http://127.0.0.1:9", root=tmp_path) as env:
        yield env


def test_an_untagged_child_of_a_tagged_process_is_found(
    env: IsolatedGemini, tmp_path: Path
) -> None:
    pid_file = tmp_path / "child"
    script = f"env -i setsid sh -c 'echo $$ > {pid_file}; exec sleep 60' & wait"
    parent = subprocess.Popen(["sh", "-c", script], env=env.environ(), start_new_session=True)
    try:
        eventually_blocking(lambda: pid_file.exists() and bool(pid_file.read_text().strip()))
        child = int(pid_file.read_text())
        assert sorted(env.live_processes(settle=0)) == sorted([parent.pid, child])
    finally:
        os.killpg(parent.pid, signal.SIGKILL)
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
        parent.wait()
    assert env.live_processes() == []


def test_a_process_of_another_environment_is_not(env: IsolatedGemini, tmp_path: Path) -> None:
    other = IsolatedGemini("http://127.0.0.1:9", root=tmp_path / "other")
    sleeper = subprocess.Popen(["sleep", "60"], env=other.environ())
    try:
        assert env.live_processes(settle=0) == []
        assert other.live_processes(settle=0) == [sleeper.pid]
    finally:
        sleeper.kill()
        sleeper.wait()
