"""Session files that are broken or hostile: each is a `Problem` on that file (or, for
``sessions show``, exit 1 with a message), and everything else in the home still lists."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gemwire.cli import main
from gemwire.sessions import GeminiHome, Problem, RawMessage, read_session_info
from gemwire.sessions.gemini import load_session

Make = Callable[[str, str], Any]  # conftest.Materialized
HEADER = {"sessionId": "s-1", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z"}
DEEP = b"[" * 3000 + b"]" * 3000


def jsonl(*lines: bytes) -> bytes:
    return json.dumps(HEADER).encode() + b"\n" + b"".join(line + b"\n" for line in lines)


def user(message_id: str, text: str) -> bytes:
    record = {"id": message_id, "timestamp": "t", "type": "user", "content": text}
    return json.dumps(record).encode()


def test_a_latin1_byte_is_replaced_as_gemini_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(user("1", "cafX").replace(b"X", b"\xe9")))
    conversation = load_session(path)
    assert [m.content for m in conversation.messages if not isinstance(m, RawMessage)] == [
        "caf\ufffd"
    ]
    assert conversation.problems == [Problem(line=2, message="replaced 1 invalid UTF-8 byte(s)")]
    info = read_session_info(path)
    assert (info.first_prompt, info.problems, info.resumable) == ("caf\ufffd", 1, True)


def test_deep_nesting_is_a_problem_on_its_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(user("1", "hi"), b'{"id":"2","type":"gemini","content":' + DEEP + b"}"))
    conversation = load_session(path)
    assert [m.id for m in conversation.messages] == ["1"]
    assert conversation.problems == [
        Problem(line=3, message="not JSON (nested too deeply to decode)")
    ]
    assert read_session_info(path).problems == 1


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b'{\n "sessionId": "s", "x": ' + DEEP + b"\n}", "not JSON (nested too deeply to decode)"),
        (b'{\n "sessionId": "s", "messages": [], "x": "\xe9"\n}', None),
    ],
    ids=["deep", "latin1"],
)
def test_legacy_json_files(tmp_path: Path, data: bytes, why: str | None) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(data)
    conversation = load_session(path)
    if why is None:
        assert (conversation.session_id, conversation.format) == ("s", "json")
        assert conversation.problems == [
            Problem(line=0, message="replaced 1 invalid UTF-8 byte(s)")
        ]
    else:
        assert conversation.session_id is None
        assert conversation.problems == [Problem(line=0, message=why)]


def test_40k_rewinds_load_in_linear_time(tmp_path: Path) -> None:
    kept = [user(f"m{i}", f"prompt {i}") for i in range(20_000)]
    churn = [
        line
        for i in range(40_000)
        for line in (user(f"x{i}", "gone"), json.dumps({"$rewindTo": f"x{i}"}).encode())
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(*kept, *churn, json.dumps({"$rewindTo": "m19990"}).encode()))
    started = time.monotonic()
    conversation = load_session(path)
    info = read_session_info(path)
    elapsed = time.monotonic() - started
    assert [m.id for m in conversation.messages] == [f"m{i}" for i in range(19_990)]
    assert info.messages == 19_990
    # Quadratic, this took 65 s on the shared machine; linear, about 1.5 s.
    assert elapsed < 20


def _bad_files(chats: Path) -> None:
    """Next to the recorded session: every kind of broken file."""
    (chats / "session-2026-01-01T00-00-aaaaaaaa.jsonl").write_bytes(b"")
    (chats / "session-2026-01-01T00-00-bbbbbbbb.jsonl").write_bytes(os.urandom(64) + b"\xff")
    (chats / "session-2026-01-01T00-00-cccccccc.json").write_bytes(b'{\n  "sessionId": "x",\n')
    (chats / "session-2026-01-01T00-00-dddddddd.jsonl").write_bytes(
        jsonl(user("1", "deep"), b'{"id":"2","content":' + DEEP + b"}")
    )


def test_broken_files_do_not_stop_listing(materialize: Make) -> None:
    run = materialize("0.61.0", "plain_answer")
    _bad_files(run.chats)
    home = GeminiHome(run.home)
    listed = home.sessions(run.workspace)
    # By start time: the generated one says 2026-01-01, before the recording.
    assert [(i.first_prompt, i.problems) for i in listed] == [("deep", 1), ("say hello", 0)]
    assert [(i.first_prompt, i.problems) for i in home.all_sessions()] == [
        ("deep", 1),
        ("say hello", 0),
    ]
    files = home.session_files(run.workspace)
    assert [(i.short_id, i.id, i.resumable) for i in files][:4] == [
        ("aaaaaaaa", None, False),
        ("bbbbbbbb", None, False),
        ("cccccccc", None, False),
        ("dddddddd", "s-1", True),
    ]


def sessions(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["sessions", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("aaaaaaaa.jsonl", "empty file"),
        ("bbbbbbbb.jsonl", "not JSON"),
        ("cccccccc.json", "not JSON (Input data was truncated)"),
    ],
    ids=["empty", "binary", "truncated"],
)
def test_show_refuses_a_file_that_is_not_a_session(materialize: Make, name: str, why: str) -> None:
    run = materialize("0.61.0", "plain_answer")
    _bad_files(run.chats)
    path = run.chats / f"session-2026-01-01T00-00-{name}"
    for mode in ([], ["--json"]):
        code, out, err = sessions("show", str(path), "--gemini-home", str(run.home), *mode)
        assert (code, out) == (1, "")
        assert err.startswith(f"Error: {path} is not a Gemini session: ")
        assert why in err
        assert "None" not in err


def test_the_rest_of_the_home_lists_and_shows(materialize: Make) -> None:
    run = materialize("0.61.0", "plain_answer")
    _bad_files(run.chats)
    where = ["--gemini-home", str(run.home), "--project", str(run.workspace)]
    code, out, _ = sessions("list", *where)
    assert code == 0
    assert [line.split(" (")[0] for line in out.splitlines()] == ["  1. deep", "  2. say hello"]
    code, out, _ = sessions("show", "1", *where)
    assert code == 0
    assert "line 3: not JSON (nested too deeply to decode)" in out


def test_show_accepts_a_session_file_outside_the_home(materialize: Make, tmp_path: Path) -> None:
    run = materialize("0.61.0", "plain_answer")
    [recorded] = run.session_files()
    copy = tmp_path / "attachment.jsonl"
    shutil.copyfile(recorded, copy)
    code, out, _ = sessions("show", str(copy), "--gemini-home", str(run.home))
    assert code == 0
    assert out.splitlines()[:3] == [
        f"# {copy}",
        "session 1463b159-95bf-4f97-ae5c-9baf64366009",
        "> say hello",
    ]
    code, _, err = sessions("show", str(tmp_path / "missing.jsonl"), "--gemini-home", str(run.home))
    assert code == 1
    assert "is not a session file in" in err


def test_list_json_with_a_file_name_that_is_not_utf8(materialize: Make) -> None:
    run = materialize("0.61.0", "plain_answer")
    [recorded] = run.session_files()
    name = os.fsencode(run.chats) + b"/session-2026-01-01T00-00-eeeeeeee\xff.jsonl"
    with open(name, "wb") as file:
        file.write(recorded.read_bytes().replace(b"1463b159-95bf", b"2463b159-95bf"))
    code, out, _ = sessions("list", "--json", "--gemini-home", str(run.home), "--all-projects")
    assert code == 0
    paths = sorted(json.loads(line)["path"] for line in out.splitlines())
    assert paths == [
        f"{run.chats}/session-2026-01-01T00-00-eeeeeeee\ufffd.jsonl",
        f"{run.chats}/session-2026-11-22T09-31-1463b159.jsonl",
    ]


def test_content_nested_as_deep_as_decoding_allows_loads(tmp_path: Path) -> None:
    # 900 lists deep decodes; reading the text out of it must not recurse in Python.
    content = b"[" * 900 + b'{"text":"deep"}' + b"]" * 900
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(b'{"id":"1","timestamp":"t","type":"user","content":' + content + b"}"))
    info = read_session_info(path)
    assert (info.resumable, info.problems) == (True, 0)  # Gemini reads "deep" out of it
    conversation = load_session(path)
    assert [m.id for m in conversation.messages] == ["1"]
    assert [e.type for e in conversation.events()] == ["session_started"]  # no text parts


@pytest.mark.parametrize(
    "registry",
    [b'{"projects": {"caf\xe9": "x"}}', b'{"projects": {}, "z": ' + DEEP + b"}"],
    ids=["latin1", "deep"],
)
def test_a_broken_project_registry_is_ignored_as_gemini_resets_it(
    materialize: Make, registry: bytes
) -> None:
    run = materialize("0.61.0", "plain_answer")
    (run.home / ".gemini" / "projects.json").write_bytes(registry)
    home = GeminiHome(run.home)
    assert home.registry() == {}
    # The slug folder is still found by its .project_root marker.
    assert [info.first_prompt for info in home.sessions(run.workspace)] == ["say hello"]


def test_a_file_that_cannot_be_read_does_not_stop_listing(materialize: Make) -> None:
    run = materialize("0.61.0", "plain_answer")
    _bad_files(run.chats)
    unreadable = run.chats / "session-2026-01-01T00-00-dddddddd.jsonl"
    unreadable.unlink()
    unreadable.symlink_to(unreadable.name)  # opening it fails: a loop (ELOOP)
    home = GeminiHome(run.home)
    assert [info.first_prompt for info in home.sessions(run.workspace)] == ["say hello"]
    assert len(home.session_files(run.workspace)) == 4


def test_show_and_export_a_session_whose_file_name_is_not_utf8(materialize: Make) -> None:
    run = materialize("0.61.0", "plain_answer")
    [recorded] = run.session_files()
    name = os.fsencode(run.chats) + b"/session-2026-01-01T00-00-eeeeeeee\xff.jsonl"
    with open(name, "wb") as file:
        file.write(recorded.read_bytes() + b"not json\n")
    path = os.fsdecode(name)
    shown = f"{run.chats}/session-2026-01-01T00-00-eeeeeeee\ufffd.jsonl"
    for command in (["show", "--json"], ["export"]):
        code, out, _ = sessions(*command, path, "--gemini-home", str(run.home))
        assert code == 0
        [notice] = [e for e in map(json.loads, out.splitlines()) if e["type"] == "notice"]
        assert (
            notice["message"]
            == f"{shown}: line 7: not JSON (JSON is malformed: invalid character (byte 4))"
        )
    code, out, _ = sessions("show", path, "--gemini-home", str(run.home))
    assert (code, out.splitlines()[0]) == (0, f"# {shown}")


def test_a_text_file_is_not_a_session_for_show_or_export_and_says_so_once(
    materialize: Make, tmp_path: Path
) -> None:
    run = materialize("0.61.0", "plain_answer")
    passwd = tmp_path / "passwd"
    passwd.write_text("".join(f"user{n}:x:{n}:{n}::/home/user{n}:/bin/sh\n" for n in range(5)))
    why = "not JSON (JSON is malformed: invalid character (byte 0))"
    expected = f"Error: {passwd} is not a Gemini session: {why} (and 3 more problems)\n"
    for command in (["show"], *(["export", "--format", f] for f in ("html", "markdown", "events"))):
        code, out, err = sessions(*command, str(passwd), "--gemini-home", str(run.home))
        assert (code, out, err) == (1, "", expected)


def test_a_session_file_is_opened_in_binary_mode_on_windows(tmp_path: Path) -> None:
    """Windows' ``os.open`` reads text mode without ``O_BINARY`` (Ctrl-Z ends a read, CRLF
    turns LF). Windows cannot run here: its flag and platform are stood in for, in a child
    Python, and the flags the file was opened with are looked at."""
    session = tmp_path / "s.jsonl"
    session.write_bytes(b'{"a":1}\r\n\x1a{"b":2}\n')
    code = textwrap.dedent(
        """
        import os, signal, sys, types
        sys.modules["msvcrt"] = types.ModuleType("msvcrt")
        os.O_BINARY = 0x8000
        signal.SIGBREAK = 21  # Ctrl-Break: _portable names it on Windows
        sys.platform = "win32"
        flags, real = [], os.open
        def recording(path, mode, *rest):
            flags.append(mode)
            return real(path, mode & ~0x8000, *rest)
        os.open = recording
        from pathlib import Path
        from gemwire.sessions._reading import open_session_file
        with open_session_file(Path(sys.argv[1])) as file:
            data = file.read()
        print(flags[0] & 0x8000, len(data))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(session)],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.split() == [str(0x8000), str(session.stat().st_size)], done.stderr
