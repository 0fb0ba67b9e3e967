"""A turn keeps files and notices for its result, not every event."""

from __future__ import annotations

from gemwire.events import FileChanged, MessageDelta, Notice
from gemwire.runners.turn_result import MAX_KEPT_NOTICES, TurnRecord


def test_a_record_keeps_files_and_the_last_notices_only() -> None:
    record = TurnRecord()
    for n in range(200_000):
        record.add(MessageDelta(agent="a", text=str(n)))
    for n in range(MAX_KEPT_NOTICES + 5):
        record.add(Notice(agent="a", severity="info", message=str(n), source="gemwire"))
    record.add(FileChanged(agent="a", path="/w/x", change="created", derived=False))
    assert [f.path for f in record.files_changed] == ["/w/x"]
    assert len(record.notices) == MAX_KEPT_NOTICES
    assert record.notices[0].message == "5"
    assert not hasattr(record, "events")
