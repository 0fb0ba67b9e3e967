"""The session lock folder is the user's alone, and lock files do not pile up (issue 11 item 4)."""

from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path

import pytest

from gemwire.errors import LockFolderUnsafe
from gemwire.runners.session_lock import SessionLock, lock_folder


@pytest.fixture(autouse=True)
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    return tmp_path


def test_the_folder_is_under_xdg_runtime_dir_when_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert lock_folder() == runtime / "gemwire-sessions"
    assert (runtime / "gemwire-sessions").is_dir()


def test_a_folder_others_may_write_to_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / f"gemwire-sessions-{os.getuid()}"
    folder.mkdir()
    folder.chmod(0o777)
    with pytest.raises(LockFolderUnsafe) as caught:
        SessionLock("/home", "s1")
    assert str(caught.value) == (
        f"refusing the session lock folder {folder}: others may write to it (mode 777); "
        "remove it, or set XDG_RUNTIME_DIR to a folder of your own"
    )
    assert caught.value.path == str(folder)


def test_a_folder_of_another_user_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another user created "our" folder first: it exists, and it is not ours.
    owner = os.getuid()
    (tmp_path / "gemwire-sessions-4242").mkdir(mode=0o700)
    monkeypatch.setattr(os, "getuid", lambda: 4242)
    with pytest.raises(LockFolderUnsafe, match=f"it belongs to uid {owner}, not to you"):
        SessionLock("/home", "s1")


def test_a_symlinked_folder_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (tmp_path / f"gemwire-sessions-{os.getuid()}").symlink_to(elsewhere)
    with pytest.raises(LockFolderUnsafe, match="it is not a folder"):
        SessionLock("/home", "s1")


def test_a_symlinked_lock_file_is_not_followed(tmp_path: Path) -> None:
    lock = SessionLock("/home", "s1")
    target = tmp_path / "target"
    lock._path.symlink_to(target)
    with pytest.raises(LockFolderUnsafe, match="it is a symlink"):
        lock.try_acquire()
    assert not target.exists()


def test_one_holder_at_a_time_and_the_file_goes_on_release() -> None:
    first, second = SessionLock("/home", "s1"), SessionLock("/home", "s1")
    assert first.try_acquire()
    assert not second.try_acquire()
    assert SessionLock("/home", "s2").try_acquire()  # another session is independent
    first.release()
    assert not first._path.exists()
    assert second.try_acquire()
    second.release()


def test_lock_files_left_by_killed_runs_are_removed(tmp_path: Path) -> None:
    stale = lock_folder() / ("0" * 32 + ".lock")
    stale.touch()  # a run was killed: its file stayed, nobody holds it
    held = SessionLock("/home", "held")
    assert held.try_acquire()
    lock = SessionLock("/home", "s1")
    assert lock.try_acquire()
    lock.release()
    assert sorted(p.name for p in lock_folder().iterdir()) == [held._path.name]
    held.release()


def test_a_waiter_that_locks_a_removed_file_tries_again(monkeypatch: pytest.MonkeyPatch) -> None:
    holder, waiter, late = (SessionLock("/home", "s1") for _ in range(3))
    assert holder.try_acquire()
    real_flock = fcntl.flock

    def holder_leaves_first(fd: int, operation: int) -> None:
        # Between the waiter's open and its flock, the holder releases (removing the file)
        # and a late run takes the lock on a new file at the same path.
        monkeypatch.setattr(fcntl, "flock", real_flock)
        holder.release()
        assert late.try_acquire()
        real_flock(fd, operation)  # succeeds: nobody holds the removed file

    monkeypatch.setattr(fcntl, "flock", holder_leaves_first)
    assert not waiter.try_acquire()  # its inode is not the one at the path any more
    late.release()
    assert waiter.try_acquire()
    waiter.release()
