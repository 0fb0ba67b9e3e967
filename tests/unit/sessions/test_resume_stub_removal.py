"""The runner's guard removes exactly the stub files a resume leaves
(docs/gemini-cli.md#session-cleanup)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import msgspec

from gemwire.sessions import remove_resume_stubs

Materialize = Callable[[str, str], Any]  # tests/unit/sessions/conftest.py


def stub_of(home: Any) -> tuple[str, str]:
    """Write a stub as a resume in a later minute does (the original's header and injected
    context only); returns its path and the session id."""
    (original,) = home.session_files()
    header, context = original.read_bytes().split(b"\n")[:2]
    stub = original.with_name(f"session-2026-11-22T10-00-{original.name.rsplit('-', 1)[1]}")
    stub.write_bytes(header + b"\n" + context + b"\n")
    return str(stub), str(msgspec.json.decode(header)["sessionId"])


def test_the_stub_of_a_resumed_session_goes_and_the_session_stays(materialize: Materialize) -> None:
    home = materialize("0.61.0", "resume")
    (original,) = home.session_files()
    stub, session_id = stub_of(home)
    removed = remove_resume_stubs(str(home.home), str(home.workspace), session_id)
    assert removed == [stub]
    assert home.session_files() == [original]


def test_a_new_sessions_own_file_is_never_touched(materialize: Materialize) -> None:
    home = materialize("0.61.0", "resume")
    (original,) = home.session_files()
    stub, session_id = stub_of(home)
    original.unlink()  # only the not-yet-resumable file of a session just started is left
    assert remove_resume_stubs(str(home.home), str(home.workspace), session_id) == []
    assert [str(p) for p in home.session_files()] == [stub]


def test_files_of_another_session_are_left_alone(materialize: Materialize) -> None:
    home = materialize("0.61.0", "resume")
    stub, _ = stub_of(home)
    other = "ffffffff-0000-4000-8000-000000000000"
    assert remove_resume_stubs(str(home.home), str(home.workspace), other) == []
    assert stub in [str(p) for p in home.session_files()]


def test_a_fifo_named_like_a_stub_is_left_alone(materialize: Materialize) -> None:
    home = materialize("0.61.0", "resume")
    stub, session_id = stub_of(home)
    fifo = stub.replace("T10-00-", "T10-01-")
    os.mkfifo(fifo)
    assert remove_resume_stubs(str(home.home), str(home.workspace), session_id) == [stub]
    assert os.path.exists(fifo)
