"""The session lock folder is the user's alone, and lock files do not pile up (issue 11 item 4).

Runs on Windows too (the CI workflow's Windows job): what needs uids, mode bits or symlinks
skips there, and Windows' rule that an open file cannot be removed is also a fake here.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

from gemwire._portable import user_id
from gemwire.errors import LockFolderUnsafe
from gemwire.runners.session_lock import SessionLock, SystemLockFiles, lock_folder

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="no uids, modes or symlinks")


@pytest.fixture(autouse=True)
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    return tmp_path


def _own_folder(tmp_path: Path) -> Path:
    uid = user_id()
    return tmp_path / ("gemwire-sessions" if uid is None else f"gemwire-sessions-{uid}")


def test_the_folder_is_under_xdg_runtime_dir_when_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert lock_folder() == runtime / "gemwire-sessions"
    assert (runtime / "gemwire-sessions").is_dir()


def test_without_it_the_folder_is_the_users_own_in_the_temporary_folder(tmp_path: Path) -> None:
    assert lock_folder() == _own_folder(tmp_path)


@posix_only
def test_a_folder_others_may_write_to_is_refused(tmp_path: Path) -> None:
    folder = _own_folder(tmp_path)
    folder.mkdir()
    folder.chmod(0o777)
    with pytest.raises(LockFolderUnsafe) as caught:
        SessionLock("/home", "s1")
    assert str(caught.value) == (
        f"refusing the session lock folder {folder}: others may write to it (mode 777); "
        "remove it, or set XDG_RUNTIME_DIR to a folder of your own"
    )
    assert caught.value.path == str(folder)


@posix_only
def test_a_folder_of_another_user_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another user created "our" folder first: it exists, and it is not ours.
    owner = user_id()
    (tmp_path / "gemwire-sessions-4242").mkdir(mode=0o700)
    monkeypatch.setattr("os.getuid", lambda: 4242)
    with pytest.raises(LockFolderUnsafe, match=f"it belongs to uid {owner}, not to you"):
        SessionLock("/home", "s1")


@posix_only
def test_a_symlinked_folder_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    _own_folder(tmp_path).symlink_to(elsewhere)
    with pytest.raises(LockFolderUnsafe, match="it is not a folder"):
        SessionLock("/home", "s1")


@posix_only
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


def test_lock_files_left_by_killed_runs_are_removed() -> None:
    stale = lock_folder() / ("0" * 32 + ".lock")
    stale.touch()  # a run was killed: its file stayed, nobody holds it
    held = SessionLock("/home", "held")
    assert held.try_acquire()
    lock = SessionLock("/home", "s1")
    assert lock.try_acquire()
    lock.release()
    assert sorted(p.name for p in lock_folder().iterdir()) == [held._path.name]
    held.release()


class WaiterOvertaken(SystemLockFiles):
    """Between the waiter's open and its lock, the holder releases (removing the file)
    and a late run takes the lock on a new file at the same path."""

    def __init__(self, holder: SessionLock, late: SessionLock) -> None:
        self.holder, self.late = holder, late

    def lock(self, fd: int) -> bool:
        self.holder.release()
        assert self.late.try_acquire()
        return super().lock(fd)  # succeeds where the removed file is not the late run's


def test_a_waiter_that_locks_a_removed_file_tries_again() -> None:
    holder, late = SessionLock("/home", "s1"), SessionLock("/home", "s1")
    assert holder.try_acquire()
    waiter = SessionLock("/home", "s1", files=WaiterOvertaken(holder, late))
    assert not waiter.try_acquire()  # its inode is not the one at the path any more
    late.release()
    waiter = SessionLock("/home", "s1")
    assert waiter.try_acquire()
    waiter.release()


class WindowsFiles(SystemLockFiles):
    """This OS's files under Windows' rule: a file open anywhere cannot be removed
    (``os.open`` there shares no delete access; ``DeleteFileW`` fails, sharing violation)."""

    unlinks_open_files = False

    def __init__(self) -> None:
        self.open_files: dict[int, Path] = {}

    def open(self, path: Path) -> int:
        fd = super().open(path)
        self.open_files[fd] = path
        return fd

    def close(self, fd: int) -> None:
        super().close(fd)
        del self.open_files[fd]

    def unlink(self, path: Path) -> None:
        if path in self.open_files.values():
            raise PermissionError(13, "being used by another process", str(path))
        super().unlink(path)


def test_on_windows_a_second_run_of_a_session_gets_the_lock_the_first_let_go() -> None:
    windows = WindowsFiles()
    (lock_folder() / ("0" * 32 + ".lock")).touch()  # left by a killed run
    first = SessionLock("/home", "s1", files=windows)
    assert first.try_acquire()
    first.release()
    second = SessionLock("/home", "s1", files=windows)
    assert second.try_acquire()  # no descriptor of the first run's still holds it
    second.release()
    assert windows.open_files == {}
    assert list(lock_folder().iterdir()) == []  # removed once closed, the stale one too


def test_on_windows_a_file_another_run_holds_open_stays_for_a_later_run_to_remove() -> None:
    windows = WindowsFiles()
    first, second = (SessionLock("/home", "s1", files=windows) for _ in range(2))
    assert first.try_acquire()
    assert not second.try_acquire()
    opened = windows.open(first._path)  # another run, between its open and its lock
    first.release()
    assert first._path.exists()
    windows.close(opened)
    assert second.try_acquire()
    second.release()
    assert (list(lock_folder().iterdir()), windows.open_files) == ([], {})


def test_the_system_files_follow_this_os_s_rule() -> None:
    assert SystemLockFiles.unlinks_open_files is (sys.platform != "win32")
