"""What the store writes, and when (docs/server.md, Persistence): each envelope is handed to
the operating system when `EventLog.append` returns, before any client is sent it;
`SessionStore.save` writes a record that changed, and skips one saved unchanged (the end of
every turn saves it: a write and a rename on the event loop each time)."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from gemwire.server.store import EventLog, SessionRecord, SessionStore

SESSION = "s_00000000000000aa"


def _record(title: str | None = None) -> SessionRecord:
    return SessionRecord(
        id=SESSION, agent="gemini", cwd="/w", created="2026-12-02T00:00:00Z", title=title
    )


def test_an_unchanged_record_is_not_written_again_and_a_changed_one_is(tmp_path: Path) -> None:
    store = SessionStore(str(tmp_path))
    store.save(_record())
    path = Path(store.session_folder(SESSION), "session.json")
    first = path.stat().st_ino  # a write makes a new file (renamed over the old)
    store.save(_record())
    assert path.stat().st_ino == first
    store.save(_record(title="hello"))
    assert path.stat().st_ino != first
    assert msgspec.json.decode(path.read_bytes(), type=SessionRecord).title == "hello"


def test_a_record_removed_is_written_whole_when_saved_again(tmp_path: Path) -> None:
    store = SessionStore(str(tmp_path))
    store.save(_record())
    store.remove(SESSION)
    store.save(_record())
    assert os.path.exists(os.path.join(store.session_folder(SESSION), "session.json"))


def test_an_envelope_is_in_the_file_when_append_returns(tmp_path: Path) -> None:
    # Read by another open file, as a killed server's successor reads it: nothing waits in
    # this process's buffers.
    log = EventLog(str(tmp_path / "events.jsonl"))
    try:
        log.append(1, b'{"seq":1,"state":{"status":"idle"}}')
        assert (tmp_path / "events.jsonl").read_bytes() == b'{"seq":1,"state":{"status":"idle"}}\n'
    finally:
        log.close()
