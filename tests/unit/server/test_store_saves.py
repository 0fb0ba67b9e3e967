"""`SessionStore.save` writes a record that changed, and skips one saved unchanged (the
end of every turn saves it: a write and a rename on the event loop each time)."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from gemwire.server.store import SessionRecord, SessionStore

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
