"""The listing index: a listing reads only the session files that changed since the last one,
lists exactly what reading every file lists, and keeps its index in gemwire's cache folder."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import msgspec
import pytest

from gemwire.sessions import GeminiHome, SessionInfo, _index, read_session_info
from gemwire.sessions._index import ListingIndex
from gemwire.sessions.gemini import _home

Make = Callable[..., Any]  # conftest.Materialized


def listed(run: Any) -> list[SessionInfo]:
    return GeminiHome(run.home).sessions(run.workspace)


def read_nothing() -> Any:
    return mock.patch.object(_home, "read_session_info", side_effect=AssertionError("read"))


@pytest.fixture(autouse=True)
def index_every_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """The recorded homes hold a few sessions; these tests are about the index itself."""
    monkeypatch.setattr(_index, "INDEXED_FROM", 1)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    return folder / "gemwire" / "listing"


@pytest.mark.parametrize(
    ("version", "case"),
    [
        ("0.61.0", "resume"),
        ("0.61.0", "session_subagent"),
        ("0.30.0", "session_resume_edits"),
        ("0.15.4", "resume_prompt_flag"),
    ],
)
def test_a_warm_listing_is_the_listing_of_every_file_read(
    materialize: Make, cache: Path, monkeypatch: pytest.MonkeyPatch, version: str, case: str
) -> None:
    run = materialize(version, case)
    cold = GeminiHome(run.home).session_files(run.workspace)
    with read_nothing():
        warm = GeminiHome(run.home).session_files(run.workspace)
        assert listed(run) == _home._numbered(warm)
    monkeypatch.setenv("XDG_CACHE_HOME", str(run.root / "no-such-folder" / "x"))
    (run.root / "no-such-folder").write_text("a file: the cache folder cannot be made")
    uncached = GeminiHome(run.home).session_files(run.workspace)
    assert cold == warm == uncached
    assert [len(info.subagents) for info in warm] == [1 if case == "session_subagent" else 0]


def test_a_session_appended_to_between_two_listings_is_read_again(
    materialize: Make, cache: Path
) -> None:
    run = materialize("0.61.0", "resume")
    [before] = listed(run)
    [path] = run.session_files()
    with path.open("ab") as file:
        file.write(b'{"id":"x","timestamp":"t","type":"user","content":[{"text":"and 8"}]}\n')
        file.write(b'{"$set":{"lastUpdated":"2026-11-22T10:00:00.000Z"}}\n')
    [after] = listed(run)
    assert (before.messages, before.last_updated) == (5, "2026-11-22T09:40:15.455Z")
    assert (after.messages, after.last_updated) == (6, "2026-11-22T10:00:00.000Z")
    assert after == msgspec.structs.replace(
        before, messages=6, last_updated="2026-11-22T10:00:00.000Z"
    )


def test_a_file_rewritten_to_the_same_size_is_read_again(materialize: Make, cache: Path) -> None:
    run = materialize("0.61.0", "resume")
    [path] = run.session_files()
    assert listed(run)[0].first_prompt == "remember the number 7"
    stat = path.stat()
    path.write_bytes(path.read_bytes().replace(b"the number 7", b"the number 9"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    assert path.stat().st_size == stat.st_size
    assert listed(run)[0].first_prompt == "remember the number 9"


def test_files_that_are_gone_leave_the_index(materialize: Make, cache: Path) -> None:
    run = materialize("0.61.0", "resume")
    home = GeminiHome(run.home)
    [path] = run.session_files()
    copy = path.with_name(path.name.replace("a5478449", "b5478449"))
    copy.write_bytes(path.read_bytes().replace(b"a5478449-", b"b5478449-"))
    assert len(home.session_files(run.workspace)) == 2
    copy.unlink()
    assert [i.path for i in home.session_files(run.workspace)] == [str(path)]
    [index] = cache.iterdir()
    entries = msgspec.msgpack.decode(index.read_bytes())["entries"]
    assert list(entries) == [path.name]


def test_the_files_of_one_session_are_read_never_taken_from_the_index(
    materialize: Make, cache: Path
) -> None:
    """What `remove_resume_stubs` deletes is decided by the files themselves."""
    run = materialize("0.61.0", "resume")
    home = GeminiHome(run.home)
    listed(run)
    [index] = cache.iterdir()
    written = index.read_bytes()
    with mock.patch.object(_home, "read_session_info", wraps=read_session_info) as read:
        [info] = home.files_of("a5478449", run.workspace)
    assert [c.args[0] for c in read.call_args_list] == [info.path]
    assert index.read_bytes() == written


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\xc1 not msgpack",
        msgspec.msgpack.encode({"version": 1, "folder": "/elsewhere", "entries": {}}),
        msgspec.msgpack.encode({"version": 999, "entries": {"x": [1, 2]}}),
        msgspec.msgpack.encode([1, 2, 3]),
        b"\x91" * 100_000,  # nested too deeply to decode
    ],
    ids=["empty", "garbage", "another-folder", "another-version", "another-shape", "deep"],
)
def test_a_corrupt_or_foreign_index_is_ignored_and_rebuilt(
    materialize: Make, cache: Path, content: bytes
) -> None:
    run = materialize("0.61.0", "resume")
    expected = listed(run)
    [index] = cache.iterdir()
    index.write_bytes(content)
    assert listed(run) == expected
    with read_nothing():
        assert listed(run) == expected  # rebuilt: nothing read this time


def test_an_index_naming_other_infos_for_the_same_files_is_not_trusted(
    materialize: Make, cache: Path
) -> None:
    """Another folder's index copied over this one's (same file names, other paths)."""
    first, second = materialize("0.61.0", "resume"), materialize("0.61.0", "resume")
    listed(first)
    [index] = cache.iterdir()
    folder = os.path.realpath(second.chats)
    entries = msgspec.msgpack.decode(index.read_bytes())["entries"]
    forged = {"version": 1, "folder": folder, "entries": entries}
    ListingIndex(str(second.chats)).path.write_bytes(msgspec.msgpack.encode(forged))
    [info] = listed(second)
    assert info.path.startswith(str(second.root))


def test_the_index_is_in_gemwire_cache_folder_never_in_the_gemini_home(
    materialize: Make, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = materialize("0.61.0", "resume")
    user = tmp_path / "user"
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.delenv("XDG_CACHE_HOME")
    files = sorted(run.home.rglob("*"))
    listed(run)
    assert sorted(run.home.rglob("*")) == files
    [index] = (user / ".cache" / "gemwire" / "listing").iterdir()
    assert index.name.endswith(".msgpack")
    assert (index.parent.stat().st_mode & 0o777, index.stat().st_mode & 0o777) == (0o700, 0o600)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")  # as the XDG spec says
    assert ListingIndex(str(run.chats)).path == index


def test_tests_keep_the_index_out_of_the_real_home(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """tests/conftest.py points XDG_CACHE_HOME into pytest's own temporary folder."""
    assert ListingIndex("/some/chats").path.is_relative_to(tmp_path_factory.getbasetemp())


def test_the_index_is_written_atomically(materialize: Make, cache: Path) -> None:
    run = materialize("0.61.0", "resume")
    replaced: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy(source: str, target: Any) -> None:
        replaced.append((os.path.basename(source), str(target)))
        real_replace(source, target)

    with mock.patch.object(os, "replace", spy):
        listed(run)
        listed(run)  # unchanged: not written again
    [(temporary, target)] = replaced
    assert temporary.startswith(".listing-")
    assert [p.name for p in cache.iterdir()] == [os.path.basename(target)]


def test_an_interrupted_write_leaves_no_temporary_file(materialize: Make, cache: Path) -> None:
    run = materialize("0.61.0", "resume")
    with (
        mock.patch.object(os, "replace", side_effect=KeyboardInterrupt),
        pytest.raises(KeyboardInterrupt),
    ):
        listed(run)  # Ctrl-C while it is written
    assert list(cache.iterdir()) == []


def test_a_temporary_file_a_killed_listing_left_is_removed_once_stale(
    materialize: Make, cache: Path
) -> None:
    run = materialize("0.61.0", "resume")
    cache.mkdir(parents=True)
    stale, fresh = cache / ".listing-killed", cache / ".listing-writing-now"
    for temporary in (stale, fresh):
        temporary.write_bytes(b"partial")
    an_hour_ago = time.time() - 3601
    os.utime(stale, (an_hour_ago, an_hour_ago))
    listed(run)
    assert sorted(p.name for p in cache.iterdir()) == sorted(
        [fresh.name, os.path.basename(ListingIndex(str(run.chats)).path)]
    )


def test_a_file_name_that_is_not_utf8_is_listed_but_not_indexed(
    materialize: Make, cache: Path
) -> None:
    run = materialize("0.61.0", "plain_answer")
    [recorded] = run.session_files()
    name = os.fsencode(run.chats) + b"/session-2026-01-01T00-00-eeeeeeee\xff.jsonl"
    with open(name, "wb") as file:
        file.write(recorded.read_bytes().replace(b"1463b159-95bf", b"2463b159-95bf"))
    home = GeminiHome(run.home)
    first = home.session_files(run.workspace)
    assert home.session_files(run.workspace) == first
    [index] = cache.iterdir()
    entries = msgspec.msgpack.decode(index.read_bytes())["entries"]
    assert list(entries) == [recorded.name]


def test_a_folder_of_few_sessions_gets_no_index(
    materialize: Make, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A short-lived home (the demo's, a test's) must not leave an index in the user's cache.
    monkeypatch.setattr(_index, "INDEXED_FROM", 3)
    run = materialize("0.61.0", "resume")
    assert [info.first_prompt for info in listed(run)] == ["remember the number 7"]
    assert not cache.exists()
