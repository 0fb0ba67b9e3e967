"""Gemini CLI's project folders on Windows, by 0.61.0's rules
(``packages/core/src/config/projectRegistry.ts`` ``normalizePath`` and
``packages/core/src/config/storage.ts`` ``getFilePathHash(getProjectRoot())``, as bundled in
clis/gemini-0.61.0): the registry key and ``.project_root`` are ``path.resolve`` of the root,
lowercased on Windows only; the legacy hash folder is the sha256 of the root as it was."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from gemwire.sessions import QwenHome
from gemwire.sessions._source import UsageTally
from gemwire.sessions.claude import project_slug as claude_slug
from gemwire.sessions.gemini._home import GeminiHome, RootSpelling, project_hash, registry_key
from gemwire.sessions.qwen import project_slug as qwen_slug


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


CASED = r"C:\Users\Ana\Code\Gemwire"
KEY = r"c:\users\ana\code\gemwire"


def windows_home(tmp_path: Path) -> GeminiHome:
    """A home as 0.61.0 leaves it on Windows for ``CASED``: the registry and the slug
    folder keyed by the lowercased root; ``realpath`` there gives the folder's own case."""
    tmp = tmp_path / ".gemini" / "tmp"
    (tmp / "gemwire" / "chats").mkdir(parents=True)
    (tmp / "gemwire" / ".project_root").write_text(KEY)
    (tmp_path / ".gemini" / "projects.json").write_text(json.dumps({"projects": {KEY: "gemwire"}}))

    def realpath(path: str) -> str:  # the case on disk, as Windows' realpath reports it
        return CASED if path.lower() == KEY else path

    return GeminiHome(tmp_path, spelling=RootSpelling("win32", canonical=realpath))


def legacy_folder(home: GeminiHome, spelled: str) -> str:
    name = hashlib.sha256(spelled.encode()).hexdigest()
    (home.tmp_dir / name / "chats").mkdir(parents=True)
    return name


@pytest.mark.parametrize(
    "spelled",
    [CASED, "c" + CASED[1:], KEY, "C" + KEY[1:]],
    ids=["on-disk case", "lowercase drive", "lowercase", "uppercase drive only"],
)
def test_a_legacy_hash_folder_is_found_from_the_registrys_lowercased_root(
    tmp_path: Path, spelled: str
) -> None:
    home = windows_home(tmp_path)
    name = legacy_folder(home, spelled)
    assert {(p.id, p.root, p.layout) for p in home.projects()} == {
        ("gemwire", KEY, "slug"),
        (name, KEY, "hash"),
    }


@pytest.mark.parametrize("given", [CASED, KEY, "c:/users/ana/code/gemwire/"])
def test_a_project_s_folders_are_slug_then_hash_however_the_root_is_spelled(
    tmp_path: Path, given: str
) -> None:
    home = windows_home(tmp_path)
    name = legacy_folder(home, CASED)
    assert [(p.id, p.root, p.layout) for p in home.project_folders(given)] == [
        ("gemwire", CASED, "slug"),
        (name, CASED, "hash"),
    ]


def test_each_spelling_the_old_cli_ran_under_is_a_folder_of_the_project(tmp_path: Path) -> None:
    home = windows_home(tmp_path)
    cmd, vscode = legacy_folder(home, CASED), legacy_folder(home, "c" + CASED[1:])
    assert [p.id for p in home.project_folders(CASED)] == ["gemwire", cmd, vscode]


def test_a_spelling_the_cli_cannot_have_seen_is_no_match(tmp_path: Path) -> None:
    home = windows_home(tmp_path)
    other = legacy_folder(home, r"C:\Users\Ana\Code\Other")
    assert [p.id for p in home.project_folders(CASED)] == ["gemwire"]
    assert {(p.id, p.root) for p in home.projects()} == {("gemwire", KEY), (other, None)}


def test_usage_of_a_project_named_by_its_root_however_it_is_spelled(tmp_path: Path) -> None:
    # `gemwire usage --project ROOT`: the registry holds the root lowercased on Windows.
    home = windows_home(tmp_path)
    (home.tmp_dir / "gemwire" / "chats" / "session-2026-11-22T09-30-5e55e55e.jsonl").write_text(
        '{"sessionId":"5e55e55e-0000","projectHash":"","startTime":"2026-11-22T09:30:12.734Z",'
        '"lastUpdated":"2026-11-22T09:30:12.734Z","kind":"main"}\n'
        '{"id":"m1","timestamp":"2026-11-22T09:30:12.833Z","type":"gemini","content":"",'
        '"tokens":{"input":100,"output":10,"cached":0,"total":110},"model":"gemini-3.8-flash"}\n'
    )
    for wanted in (CASED, KEY, "c:/users/ana/code/gemwire/", "gemwire"):
        tally = UsageTally()
        found = [
            (where, session, [(model, tokens.output) for _, model, tokens, _, _ in responses])
            for where, session, _, responses in home.usage(wanted, tally)
        ]
        assert (found, tally.files) == ([(KEY, "5e55e55e-0000", [("gemini-3.8-flash", 10)])], 1)
    tally = UsageTally()
    assert list(home.usage(r"C:\Users\Ana\Code\Other", tally)) == []
    assert tally.files == 0


def test_qwen_code_lowercases_a_project_s_folder_on_windows_claude_code_does_not() -> None:
    """Qwen Code 0.24.4's ``sanitizeCwd`` lowercases the cwd on win32 (chunk-JSVXABP6.js);
    Claude Code's keeps its case."""
    assert qwen_slug(CASED, "win32") == "c--users-ana-code-gemwire"
    assert qwen_slug(CASED, "linux") == "C--Users-Ana-Code-Gemwire"
    assert claude_slug(CASED) == "C--Users-Ana-Code-Gemwire"


@pytest.mark.parametrize("platform", ["win32", "linux"])
def test_qwen_s_home_finds_and_counts_a_project_by_its_platform_s_folder(
    tmp_path: Path, platform: str
) -> None:
    from kit.jsonl_agents import JSONL_AGENTS

    [qwen] = [spec for spec in JSONL_AGENTS if spec.agent == "qwen"]
    project = tmp_path / "Work" / "Proj"  # a folder name with capitals
    project.mkdir(parents=True)
    chats = tmp_path / ".qwen" / "projects" / qwen_slug(str(project), platform) / "chats"
    chats.mkdir(parents=True)
    text = (qwen.recordings / "answer.jsonl").read_text().replace("__WORKSPACE__", str(project))
    (chats / "s.jsonl").write_text(text)
    for home, found in ((QwenHome(tmp_path, platform=platform), 1), (QwenHome(tmp_path), None)):
        listed = home.sessions(project)
        if found is None:  # this machine's rule finds the folder only when it is the same
            found = int(platform == "linux")
        assert len(listed) == found
        tally = UsageTally()
        counted = list(home.usage(str(project), tally))
        assert len(counted) == found
