"""Finding sessions in a Gemini home: both folder layouts, --resume's rules, safe paths."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gemwire.errors import SessionNotFound
from gemwire.sessions import GeminiHome, project_hash

Make = Callable[[str, str], Any]  # conftest.Materialized


def test_slug_layout_of_0_61(materialize: Make) -> None:
    run = materialize("0.61.0", "resume")
    home = GeminiHome(run.home)
    [project] = home.projects()
    assert (project.id, project.root, project.layout) == ("workspace", str(run.workspace), "slug")
    assert home.project_folders(run.workspace) == [project]
    [info] = home.sessions(run.workspace)
    assert (info.id, info.index, info.project, info.format, info.kind) == (
        "a5478449-32e7-46a4-aabf-2699160a708e",
        1,
        str(run.workspace),
        "jsonl",
        "main",
    )
    # The second start (the resume) wrote a later header: its startTime wins, as in Gemini.
    assert (info.start_time, info.last_updated) == (
        "2026-11-22T09:40:15.383Z",
        "2026-11-22T09:40:15.455Z",
    )
    assert (info.first_prompt, info.messages, info.summary, info.resumable) == (
        "remember the number 7",
        5,
        None,
        True,
    )
    assert info.short_id == "a5478449"


def test_hash_layout_of_0_15(materialize: Make) -> None:
    run = materialize("0.15.4", "resume_prompt_flag")
    home = GeminiHome(run.home)
    digest = project_hash(str(run.workspace))
    [project] = home.projects()
    # No projects.json before 0.29: the folder name is all there is to go on.
    assert (project.id, project.root, project.layout) == (digest, None, "hash")
    [folder] = home.project_folders(run.workspace)
    assert (folder.id, folder.root, folder.layout) == (digest, str(run.workspace), "hash")
    [info] = home.sessions(run.workspace)
    assert (info.format, info.first_prompt, info.index) == ("json", "remember the number 7", 1)


def test_slug_layout_of_0_30_and_the_default_home(
    materialize: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = materialize("0.30.0", "session_resume_edits")
    monkeypatch.setenv("GEMINI_CLI_HOME", str(run.home))
    monkeypatch.chdir(run.workspace)
    [info] = GeminiHome().sessions()
    assert (info.format, info.first_prompt, info.messages) == ("json", "create notes.txt", 6)


def test_slug_found_by_its_marker_when_the_registry_lies(materialize: Make) -> None:
    run = materialize("0.61.0", "plain_answer")
    registry = run.home / ".gemini" / "projects.json"
    registry.write_text(json.dumps({"projects": {str(run.workspace): "elsewhere"}}))
    (run.home / ".gemini" / "tmp" / "elsewhere").mkdir()
    (run.home / ".gemini" / "tmp" / "elsewhere" / ".project_root").write_text("/other/project")
    assert [p.id for p in GeminiHome(run.home).project_folders(run.workspace)] == ["workspace"]
    # A registry that breaks Gemini's schema (slugs are [a-z0-9-]+) is ignored, like Gemini does.
    registry.write_text(json.dumps({"projects": {str(run.workspace): "../../etc"}}))
    assert GeminiHome(run.home).registry() == {}
    assert [p.id for p in GeminiHome(run.home).project_folders(run.workspace)] == ["workspace"]


def test_subagent_transcripts_hang_off_their_parent(materialize: Make) -> None:
    run = materialize("0.61.0", "session_subagent")
    [info] = GeminiHome(run.home).sessions(run.workspace)
    [sub] = info.subagents
    assert (sub.kind, sub.parent_id, sub.resumable, sub.id) == (
        "subagent",
        info.id,
        False,
        "e10ad38a-7394-4747-a6f8-9e3a0e3ba062",
    )
    assert sub.summary is not None
    assert sub.summary.startswith('{\n  "SummaryOfFindings"')


def test_find_follows_gemini_resume(materialize: Make, tmp_path: Path) -> None:
    run = materialize("0.61.0", "session_subagent")
    other = materialize("0.61.0", "session_resume_edits")
    for path in other.session_files():  # a second, later session in the same project
        shutil.copyfile(path, run.chats / path.name)
    home = GeminiHome(run.home)
    first, second = home.sessions(run.workspace)
    assert (first.index, second.index) == (1, 2)
    assert home.find("latest", run.workspace) == second
    assert home.find(" 1 ", run.workspace) == first
    assert home.find(str(second.id), run.workspace) == second
    for wrong in ("0", "3", "01", "+1", "²", str(first.id)[:8], "late"):
        with pytest.raises(SessionNotFound, match="Invalid session identifier"):
            home.find(wrong, run.workspace)
    with pytest.raises(SessionNotFound, match=r"No previous sessions found for this project\."):
        home.find("latest", tmp_path)


def test_paths_must_stay_inside_the_home(materialize: Make, tmp_path: Path) -> None:
    run = materialize("0.61.0", "resume")
    home = GeminiHome(run.home)
    [path] = run.session_files()
    assert home.find(str(path)).id == "a5478449-32e7-46a4-aabf-2699160a708e"
    assert home.find(str(path)).project == str(run.workspace)
    outside = Path(shutil.copyfile(path, tmp_path / "session-x.jsonl"))
    (run.chats / "link.jsonl").symlink_to(outside)
    escapes = [str(outside), str(run.chats / ".." / ".." / ".." / ".." / outside.name)]
    for ref in [*escapes, str(run.chats / "link.jsonl"), "../../etc/passwd"]:
        with pytest.raises(SessionNotFound, match=r"not a session file in|no session file"):
            home.find(ref)


def test_files_of_a_session_include_its_stub(materialize: Make) -> None:
    """A resume in a later minute leaves a stub (header + context, not resumable; §5.5)."""
    run = materialize("0.61.0", "resume")
    [original] = run.session_files()
    stub = run.chats / original.name.replace("T09-40-", "T09-41-")
    stub.write_bytes(b"".join(original.read_bytes().splitlines(keepends=True)[:2]))  # synthetic
    home = GeminiHome(run.home)
    files = home.files_of("a5478449-32e7-46a4-aabf-2699160a708e", run.workspace)
    assert [(Path(f.path).name, f.resumable) for f in files] == [
        (original.name, True),
        (stub.name, False),
    ]
    assert home.files_of("a5478449", run.workspace) == files
    assert [s.path for s in home.sessions(run.workspace)] == [str(original)]


def test_one_entry_per_session_id_the_last_updated_wins(materialize: Make) -> None:
    run = materialize("0.61.0", "resume")
    [original] = run.session_files()
    copy = run.chats / original.name.replace("T09-40-", "T09-39-")  # sorts first
    copy.write_bytes(
        original.read_bytes() + b'{"$set":{"lastUpdated":"2026-11-23T00:00:00.000Z"}}\n'
    )  # synthetic
    [info] = GeminiHome(run.home).sessions(run.workspace)
    assert (info.path, info.last_updated) == (str(copy), "2026-11-23T00:00:00.000Z")


def test_listing_while_the_cli_appends(materialize: Make) -> None:
    """Synthetic: a writer appends records in small pieces while the project is listed."""
    run = materialize("0.61.0", "resume")
    [path] = run.session_files()
    record = json.dumps(
        {"id": "x", "timestamp": "t", "type": "gemini", "content": "more " * 200}
    ).encode()
    stop = threading.Event()

    def append() -> None:
        with path.open("ab", buffering=0) as file:
            while not stop.is_set():
                for start in range(0, len(record), 97):
                    file.write(record[start : start + 97])
                file.write(b"\n")
                os.fsync(file.fileno())

    writer = threading.Thread(target=append)
    writer.start()
    try:
        counts = [GeminiHome(run.home).sessions(run.workspace)[0].messages for _ in range(50)]
    finally:
        stop.set()
        writer.join()
    assert set(counts) <= {5, 6}  # the one upserted message id "x" appears or not
