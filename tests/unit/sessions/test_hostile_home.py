"""Hostile Gemini homes: what sits in a ``chats`` folder under a session's name, and session
ids that are paths. Only regular files up to `MAX_SESSION_BYTES` are read; anything else is a
`Problem` on that entry; a session id never leads to another folder."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st
from kit.hostile import texts

from gemwire.cli import main
from gemwire.events import UserMessage
from gemwire.sessions import (
    GeminiHome,
    Problem,
    nested_events,
    read_session_info,
    subagent_files,
    to_html,
    usage,
)
from gemwire.sessions._reading import MAX_SESSION_BYTES
from gemwire.sessions.gemini import load_session

SESSION_ID = "0a1b2c3d-0000-4000-8000-000000000001"


def _record(**fields: object) -> bytes:
    return json.dumps(fields).encode() + b"\n"


def session_bytes(session_id: str, *, agent_id: str = "victim") -> bytes:
    """A session whose model ran a subagent ``agent_id`` (its ``invoke_agent`` call names it)."""
    return (
        _record(sessionId=session_id, projectHash="h", startTime="2026-11-20T10:00:00Z")
        + _record(id="u1", timestamp="2026-11-20T10:00:00Z", type="user", content="hello")
        + _record(
            id="g1",
            timestamp="2026-11-20T10:00:01Z",
            type="gemini",
            content="hi",
            model="gemini-2.5-flash",
            tokens={"input": 10, "output": 5, "cached": 0, "total": 15},
            toolCalls=[
                {
                    "id": "call-1",
                    "name": "codebase_investigator",
                    "args": {},
                    "status": "success",
                    "timestamp": "2026-11-20T10:00:01Z",
                    "agentId": agent_id,
                }
            ],
        )
    )


def make_home(root: Path) -> tuple[Path, Path, Path]:
    """(home, project root, chats folder) with one good session in it."""
    workspace = root / "work"
    workspace.mkdir()
    project = root / "home" / ".gemini" / "tmp" / "work"
    chats = project / "chats"
    chats.mkdir(parents=True)
    (project / ".project_root").write_text(str(workspace))
    (chats / "session-2026-11-20T10-00-0a1b2c3d.jsonl").write_bytes(session_bytes(SESSION_ID))
    return root / "home", workspace, chats


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), env={"GEMWIRE_CONFIG": "/nonexistent.toml"})
    return result.exit_code, result.stdout, result.stderr


def _name(short: str) -> str:
    return f"session-2026-11-21T10-00-{short}.jsonl"


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A home whose chats folder also holds a symlink loop, a FIFO, a link to /dev/zero and
    a sparse file over the size bound, each named like a session."""
    home, workspace, chats = make_home(tmp_path)
    (chats / _name("11111111")).symlink_to(_name("11111111"))
    os.mkfifo(chats / _name("22222222"))
    (chats / _name("33333333")).symlink_to("/dev/zero")
    with open(chats / _name("44444444"), "wb") as big:
        big.truncate(MAX_SESSION_BYTES + 1)  # sparse: nothing is written
    return home, workspace, chats


@pytest.mark.timeout(20)  # before the fix: a FIFO hung usage, /dev/zero ate the memory
def test_usage_counts_the_session_and_each_hostile_file_as_a_problem(
    hostile: tuple[Path, Path, Path],
) -> None:
    home, _, _ = hostile
    report = usage(home, by="session")
    assert [(row.key, row.requests, row.total_tokens) for row in report.rows] == [
        (SESSION_ID, 1, 15)
    ]
    assert (report.files, report.problems) == (5, 4)
    code, out, _ = cli("usage", "--gemini-home", str(home), "--json")
    assert code == 0
    assert (json.loads(out)["files"], json.loads(out)["problems"]) == (5, 4)


@pytest.mark.timeout(20)
def test_listing_reports_each_hostile_file_and_lists_the_session(
    hostile: tuple[Path, Path, Path],
) -> None:
    home, workspace, chats = hostile
    gemini = GeminiHome(home)
    assert [info.id for info in gemini.sessions(workspace)] == [SESSION_ID]
    assert [info.id for info in gemini.all_sessions()] == [SESSION_ID]
    # The loop cannot be opened at all: left out, as an unreadable file is.
    files = gemini.session_files(workspace)
    assert [(Path(f.path).name, f.id, f.problems, f.resumable) for f in files] == [
        ("session-2026-11-20T10-00-0a1b2c3d.jsonl", SESSION_ID, 0, True),
        (_name("22222222"), None, 1, False),
        (_name("33333333"), None, 1, False),
        (_name("44444444"), None, 1, False),
    ]
    assert [load_session(chats / _name(short)).problems for short in ("22222222", "33333333")] == [
        [Problem(line=0, message="not a regular file (a FIFO): not read")],
        [Problem(line=0, message="not a regular file (a character device): not read")],
    ]
    assert load_session(chats / _name("44444444")).problems == [
        Problem(
            line=0,
            message=f"{MAX_SESSION_BYTES + 1:,} bytes, over the "
            f"{MAX_SESSION_BYTES:,}-byte limit: not read",
        )
    ]
    code, out, err = cli(
        "sessions", "list", "--gemini-home", str(home), "--project", str(workspace)
    )
    assert (code, out.split(" (")[0], err) == (0, "  1. hello", "")


@pytest.mark.timeout(20)
def test_show_and_export_refuse_a_hostile_file_and_show_the_session(
    hostile: tuple[Path, Path, Path],
) -> None:
    home, workspace, chats = hostile
    where = ["--gemini-home", str(home), "--project", str(workspace)]
    code, out, _ = cli("sessions", "show", "1", "--json", *where)
    assert code == 0
    assert [json.loads(line)["type"] for line in out.splitlines()][:2] == [
        "session_started",
        "user_message",
    ]
    fifo = str(chats / _name("22222222"))
    for command in ("show", "export"):
        code, out, err = cli("sessions", command, fifo, *where)
        assert (code, out) == (1, "")
        assert (
            err == f"Error: {fifo} is not a Gemini session: not a regular file (a FIFO): not read\n"
        )
    loop = str(chats / _name("11111111"))
    code, _, err = cli("sessions", "show", loop, *where)
    assert (code, err) == (1, f"Error: no session file at {loop}\n")


def test_the_home_files_themselves_are_read_only_when_regular(tmp_path: Path) -> None:
    home, workspace, _ = make_home(tmp_path)
    marker = home / ".gemini" / "tmp" / "work" / ".project_root"
    marker.unlink()
    os.mkfifo(marker)  # a FIFO .project_root hung every listing
    (home / ".gemini" / "projects.json").symlink_to("/dev/zero")
    gemini = GeminiHome(home)
    assert gemini.registry() == {}
    assert [(p.id, p.root) for p in gemini.projects()] == [("work", None)]
    assert gemini.sessions(workspace) == []  # no folder says it is this project's


def _outside_subagent(chats: Path, folder: Path) -> None:
    """A subagent transcript named ``victim`` in ``folder``, outside the session's folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "victim.jsonl").write_bytes(
        _record(sessionId="victim", projectHash="h", kind="subagent")
        + _record(id="x1", timestamp="2026-11-20T10:00:00Z", type="user", content="SECRET")
    )


@pytest.mark.parametrize("kind", ["relative", "absolute", "nul"])
def test_a_session_id_that_is_a_path_reads_nothing_outside(tmp_path: Path, kind: str) -> None:
    home, workspace, chats = make_home(tmp_path)
    outside = tmp_path / "elsewhere"
    _outside_subagent(chats, outside)
    session_id = {
        "relative": "../../../../../elsewhere",
        "absolute": str(outside),
        "nul": "a\x00b",
    }[kind]
    path = chats / "session-2026-11-20T10-00-0a1b2c3d.jsonl"
    path.write_bytes(session_bytes(session_id))
    conversation = load_session(path)
    assert conversation.session_id == session_id
    assert subagent_files(conversation) == {}
    assert [e.type for e in nested_events(conversation)] == [
        "session_started",
        "user_message",
        "message_delta",
        "tool_call_started",
        "tool_call_finished",
        "usage",
    ]
    where = ["--gemini-home", str(home), "--project", str(workspace)]
    for command in (["show", "1", "--json"], ["export", "1", "--format", "html"]):
        code, out, err = cli("sessions", *command, *where)
        assert (code, err) == (0, "")
        assert "SECRET" not in out


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    session_id=st.one_of(
        texts(),
        st.sampled_from(["", ".", "..", "/", "../elsewhere", "a\x00b", "elsewhere/"]),
        st.lists(st.sampled_from(["..", ".", "elsewhere", "chats", ""]), min_size=1).map("/".join),
    )
)
def test_no_session_id_leads_outside_its_folder(session_id: str) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        _, _, chats = make_home(root)
        # Decoys wherever a path from the id could lead: beside chats, above it, at the root.
        for folder in (root / "elsewhere", chats.parent / "elsewhere", chats.parent.parent):
            _outside_subagent(chats, folder)
        path = chats / "session-2026-11-20T10-00-0a1b2c3d.jsonl"
        path.write_bytes(session_bytes(session_id))
        conversation = load_session(path)
        files = subagent_files(conversation)
        # Only a folder right inside chats, named exactly by the id, is ever looked in.
        assert all(p.parent.parent == chats and p.parent.name == session_id for p in files.values())
        assert "SECRET" not in to_html(conversation)
        prompts = [e.text for e in nested_events(conversation) if isinstance(e, UserMessage)]
        assert prompts == ["hello"]


_KINDS = ("garbage", "session", "fifo", "loop", "zero", "folder", "dangling")


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    entries=st.lists(
        st.tuples(
            texts("aZ09 -._\x1b\x07\x9b\u202e\ufffd\U0001f600:\\", min_size=1, max_size=40),
            st.sampled_from(_KINDS),
        ),
        max_size=6,
        unique_by=lambda entry: entry[0],
    )
)
@pytest.mark.timeout(60)
def test_any_chats_folder_lists_and_counts_without_hanging(
    entries: list[tuple[str, str]],
) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        home, workspace, chats = make_home(Path(temporary))
        for stem, kind in entries:
            name = chats / f"session-{stem}.jsonl"
            if kind == "garbage":
                name.write_bytes(stem.encode() + b"\n\xff{")
            elif kind == "session":
                name.write_bytes(session_bytes(stem))
            elif kind == "fifo":
                os.mkfifo(name)
            elif kind == "loop":
                name.symlink_to(name.name)
            elif kind == "zero":
                name.symlink_to("/dev/zero")
            elif kind == "folder":
                name.mkdir()
            else:
                name.symlink_to("nowhere")
        gemini = GeminiHome(home)
        files = gemini.session_files(workspace)
        assert all(Path(info.path).parent == chats for info in files)
        assert SESSION_ID in [info.id for info in gemini.sessions(workspace)]
        report = usage(home)
        assert report.files == 1 + sum(kind != "folder" for _, kind in entries)
        for info in files:  # each one listed can be summarized again, by path too
            assert read_session_info(info.path).path == info.path
        assert cli("sessions", "list", "--gemini-home", str(home), "--all-projects")[0] == 0
