"""Gemini CLI's project folders on Windows, by 0.61.0's rules
(``packages/core/src/config/projectRegistry.ts`` ``normalizePath`` and
``packages/core/src/config/storage.ts`` ``getFilePathHash(getProjectRoot())``, as bundled in
clis/gemini-0.61.0): the registry key and ``.project_root`` are ``path.resolve`` of the root,
lowercased on Windows only; the legacy hash folder is the sha256 of the root as it was."""

from __future__ import annotations

import hashlib

from hypothesis import given, strategies as st

from gemwire.sessions.gemini._home import project_hash, registry_key


def test_windows_keys_fold_the_drive_letter_and_the_case() -> None:
    assert registry_key(r"C:\Users\Ana\Code\Gemwire", "win32") == r"c:\users\ana\code\gemwire"


def test_windows_keys_use_backslashes_and_drop_a_trailing_one() -> None:
    assert registry_key("D:/Work/Proj/", "win32") == r"d:\work\proj"
    assert registry_key("C:\\", "win32") == "c:\\"  # a drive's root keeps its separator


def test_windows_unc_paths_fold_too() -> None:
    assert registry_key(r"\\Server\Share\Proj", "win32") == r"\\server\share\proj"


def test_elsewhere_the_key_is_the_root_itself_macos_included() -> None:
    # macOS folds case in its file system, but Gemini CLI lowercases on win32 alone.
    assert registry_key("/Users/Ana/Code/Gemwire", "darwin") == "/Users/Ana/Code/Gemwire"
    assert registry_key("/home/ana/Code", "linux") == "/home/ana/Code"


def test_the_legacy_hash_folder_keeps_the_roots_case_on_windows() -> None:
    root = r"C:\Users\Ana\Code\Gemwire"
    assert project_hash(root) == hashlib.sha256(root.encode()).hexdigest()
    assert project_hash(root) != project_hash(registry_key(root, "win32"))


@given(st.text(alphabet="abcXYZ:/\\. ", min_size=1, max_size=30))
def test_a_windows_key_is_its_own_key(root: str) -> None:
    key = registry_key(root, "win32")
    assert registry_key(key, "win32") == key
    assert "/" not in key
