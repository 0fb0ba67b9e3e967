"""A Gemini session file replayed to its final state, a block of whole lines at a time.

Both loading (`load_session`) and summarizing (`read_session_info`) read through `replay`, so
a huge session is never held as one string, and both accept every format Gemini CLI has
written: append-only ``.jsonl`` (0.39 and newer) and the single pretty-printed ``.json``
(older). A line the CLI is still writing, a corrupt line or an empty file becomes a `Problem`;
only a file that cannot be read at all raises `SessionError`.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

from gemwire.errors import SessionError
from gemwire.protocol.gemini_session import Problem, RecordReplay, legacy_record
from gemwire.sessions._reading import NotRead, open_session_file
from gemwire.sessions._summary import Format
from gemwire.wire.gemini_session import MessageRecord

__all__ = ("SESSION_SUFFIXES", "replay")

SESSION_SUFFIXES = (".json", ".jsonl")
"""What Gemini CLI names its session files with."""

# Read this much at a time, then on to the end of the last line: memory bounded by the block.
# Measured with bench/sessions.py: 256 KiB slowed listing by a quarter, 4 MiB slowed loading.
_BLOCK = 1 << 20


def replay(
    path: Path,
    *,
    summary: bool,
    keep_raw: bool = False,
    message_type: type = MessageRecord,
    lines: bool = False,
) -> tuple[RecordReplay, Format]:
    """Replay the file's records; fall back to one legacy JSON document like Gemini does."""
    # Loading builds millions of objects that all stay alive: the cyclic collector would
    # scan them again and again for nothing (it halves the speed of a 100 MB load).
    paused = gc.isenabled()
    gc.disable()
    try:
        return _replay_file(
            path, summary=summary, keep_raw=keep_raw, message_type=message_type, lines=lines
        )
    finally:
        if paused:
            # A summary, a small message type or kept lines leave little of what was built.
            if not (summary or lines) and message_type is MessageRecord:
                _to_oldest_generation()
            gc.enable()


def _to_oldest_generation() -> None:
    """Move every tracked object to the oldest generation, without a collection.

    What was just loaded is long-lived. Left young, the next collection would scan all of it,
    and a later one again on its way to the oldest generation (where it then counts as new,
    bringing a full collection forward): about 0.15 s a scan for a 100 MB session.
    ``gc.freeze`` + ``gc.unfreeze`` moves it there directly. Not done when the caller froze
    objects itself, since unfreezing would release them.
    """
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


def _replay_file(
    path: Path, *, summary: bool, keep_raw: bool, message_type: type, lines: bool
) -> tuple[RecordReplay, Format]:
    replay = RecordReplay(
        summary=summary, keep_raw=keep_raw, message_type=message_type, lines=lines
    )
    try:
        opened = open_session_file(path)
    except NotRead as exc:
        replay.problems.append(Problem(line=0, message=str(exc)))
        return replay, "jsonl" if path.suffix == ".jsonl" else "json"
    with opened as file:
        try:
            first = file.readline()
            # A pretty-printed legacy file: no line of it is a record, skip straight there.
            if first.strip() != b"{":
                file.seek(0)
                _feed_blocks(replay, file)
                if replay.is_session:
                    return replay, "jsonl"
            file.seek(0)
            data = file.read()
        except OSError as exc:
            raise SessionError(f"cannot read {path}: {exc.strerror}") from exc
    legacy, why = legacy_record(data, summary=summary, keep_raw=keep_raw, message_type=message_type)
    if legacy is None:
        replay.problems.append(Problem(line=0, message=why or "not a Gemini session"))
        return replay, "jsonl" if path.suffix == ".jsonl" else "json"
    return legacy, "json"


def _feed_blocks(replay: RecordReplay, file: Any) -> None:
    """Feed the file a block of whole lines at a time."""
    lineno, tail = 1, b""
    while block := file.read(_BLOCK):
        if not block.endswith(b"\n"):
            block += file.readline()
        count, tail = replay.feed_block(block, lineno)
        lineno += count
    if tail:  # no newline at the end of the file
        replay.feed(tail, lineno, last=True)
