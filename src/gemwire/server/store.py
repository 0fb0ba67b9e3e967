"""What the server keeps on disk: each session's ``session.json`` and ``events.jsonl``.

``<state-dir>/sessions/<id>/session.json`` is the `SessionRecord` (what a restarted
server needs to list the session and continue it); ``events.jsonl`` is the `EventLog`,
one envelope a line (``{"seq": N, "event": ...}`` or ``{"seq": N, "state": ...}``),
appended and flushed as each is produced. A torn last line (the server died while
writing it) is cut off when the log is opened again and reported (`EventLog.torn`). A log
that is damaged otherwise (a line that is no envelope, a FIFO or folder in its place) is
read up to the damage and never written again (`EventLog.damage`); an append that fails
(a full disk) cuts what it wrote of its line, so the file still ends in a whole line.

    >>> import tempfile
    >>> log = EventLog(os.path.join(tempfile.mkdtemp(), "events.jsonl"))
    >>> log.append(1, b'{"seq":1,"state":{"status":"idle"}}')
    >>> log.append(2, b'{"seq":2,"state":{"status":"running"}}')
    >>> log.last_seq, [seq for seq, _ in log.read(after=1)]
    (2, [2])
    >>> log.close()
"""

from __future__ import annotations

import bisect
import contextlib
import os
import re
import shutil
import stat
import sys
from collections.abc import Iterator
from typing import Any, BinaryIO

import msgspec

from gemwire._portable import not_regular

__all__ = ("SESSION_ID", "EventLog", "SessionRecord", "SessionStore")

SESSION_ID = re.compile(r"^s_[0-9a-f]{16}$")
"""A server session id: ``s_`` and 16 hex digits (never the agent's own id)."""

_READ_CHUNK = 1 << 16
INDEX_EVERY = 256
"""One line in this many has its offset kept (`EventLog`): a read from any seq skips fewer."""
READ_BYTES = 1 << 20
"""A read gives at most about this many bytes of envelopes (at least one envelope)."""


class SessionRecord(msgspec.Struct, kw_only=True):
    """A session as ``session.json`` keeps it."""

    id: str
    agent: str
    cwd: str
    created: str
    permissions: str = "ask"
    agent_session_id: str | None = None
    title: str | None = None
    model: str | None = None
    """The model of a ``gemini-stream`` session's runs (an ACP agent keeps its own)."""
    mode: str | None = None
    """An ACP session's mode, as asked at creation (and set since): its client opens and
    continues it in that mode (`AcpOptions.mode`), in place of the mode that asks."""
    closed: bool = False


class _Seq(msgspec.Struct):
    seq: int


_seq_decoder = msgspec.json.Decoder(_Seq)


class _State(msgspec.Struct):
    status: str


class _StateLine(msgspec.Struct):
    state: _State


_state_decoder = msgspec.json.Decoder(_StateLine)
_TURN_COMPLETED = b'"event":{"type":"turn_completed"'


def _whole_lines(file: BinaryIO) -> Iterator[bytes]:
    r"""The lines of ``file`` from where it is, without their newline; what follows the last
    newline (a line being written, or a torn one) is not one yet.

    >>> import io
    >>> list(_whole_lines(io.BytesIO(b'a\n\nbc\nd')))
    [b'a', b'', b'bc']
    """
    parts: list[bytes] = []  # a line longer than a chunk, joined once whole
    while chunk := file.read(_READ_CHUNK):
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if parts:
                parts.append(chunk[start:end])
                yield b"".join(parts)
                parts = []
            else:
                yield chunk[start:end]
            start = end + 1
        if start < len(chunk):
            parts.append(chunk[start:])


class EventLog:
    """One session's ``events.jsonl``: envelopes appended in order, read back by seq.

    It keeps the offset of one line in `INDEX_EVERY` (a few KiB for a million envelopes),
    so a read from any seq starts near it instead of at the top of the file: catching up
    on a long log in batches costs the length of the log, not its square. `append` runs
    on the event loop, `read` in a worker thread (it opens the file on its own, and
    stops at a line being written).
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.torn = False
        """The file ended in a torn line, cut off when opened."""
        self.damage: str | None = None
        """What is wrong with a log found damaged when opened: it is read up to there,
        and never written."""
        self.last_status: str | None = None
        """The last status the log held when opened."""
        self.turn_open = False
        """The log held a turn begun (status ``running``) and not completed when opened."""
        self.last_seq = 0
        self._file: Any = None
        self._size = 0
        """Bytes of whole lines in the file."""
        self._lines = 0
        self._index: list[tuple[int, int]] = []
        """``(seq, offset)`` of every `INDEX_EVERY`-th line, in order (appended whole:
        a reading thread sees each entry complete)."""
        self._scan()

    def _scan(self) -> None:
        try:
            mode = os.lstat(self.path).st_mode
        except FileNotFoundError:
            return
        if not stat.S_ISREG(mode):  # a FIFO would block the server's start
            self.damage = f"{self.path} is {not_regular(mode)}, not a log"
            return
        with open(self.path, "rb") as file:
            for number, line in enumerate(_whole_lines(file), 1):
                try:
                    seq = _seq_decoder.decode(line).seq if line else None
                except msgspec.DecodeError as exc:
                    self.damage = f"line {number} of {self.path} is not an envelope ({exc})"
                    return
                self._add(line, seq)
                if seq is not None:
                    self.last_seq = seq
                    self._follow_turn(line)
            end = file.tell()
        if end > self._size:
            self.torn = True
            with open(self.path, "r+b") as torn:
                torn.truncate(self._size)

    def _follow_turn(self, line: bytes) -> None:
        """Keep `last_status` and `turn_open` up to date with a line read at load."""
        head = line[:64]
        if b',"state":' in head:
            self.last_status = _state_decoder.decode(line).state.status
            self.turn_open = self.last_status == "running"
        elif _TURN_COMPLETED in head:
            self.turn_open = False

    def _add(self, line: bytes, seq: int | None) -> None:
        """Count a whole line (its seq, if known), kept in the index if its turn."""
        if line:
            if self._lines % INDEX_EVERY == 0:
                known = seq if seq is not None else _seq_decoder.decode(line).seq
                self._index.append((known, self._size))
            self._lines += 1
        self._size += len(line) + 1

    def append(self, seq: int, envelope: bytes) -> None:
        """Write ``envelope`` (one line, no newline) to the file; an `OSError` leaves the
        file as it was (what was written of the line is cut off)."""
        assert self.damage is None
        try:
            if self._file is None:
                # Unbuffered: a line is one write, no copy into a buffer and no flush.
                self._file = open(self.path, "ab", buffering=0)  # noqa: SIM115 - open while the session lives
            line = envelope + b"\n"
            written = self._file.write(line)
            while written < len(line):  # a short write (a disk filling up) goes on or raises
                written += self._file.write(memoryview(line)[written:])
        except OSError:
            self._cut()
            raise
        self._add(envelope, seq)
        self.last_seq = seq

    def read(
        self, after: int = 0, limit: int | None = None, max_bytes: int = READ_BYTES
    ) -> list[tuple[int, bytes]]:
        """The envelopes with seq > ``after``, in order: at most ``limit``, and no more
        than ``max_bytes`` of them unless the first alone is larger. Blocking: call it in a
        worker thread."""
        found: list[tuple[int, bytes]] = []
        size = 0
        at = bisect.bisect_right(self._index, (after + 1, sys.maxsize)) - 1
        start = self._index[at][1] if at >= 0 else 0
        for seq, line in self._lines_from(start):
            if seq <= after:
                continue
            if found and size + len(line) > max_bytes:
                break
            found.append((seq, line))
            size += len(line)
            if limit is not None and len(found) >= limit:
                break
        return found

    def _cut(self) -> None:
        """Close the file and cut it back to its whole lines (a write failed mid-line)."""
        file, self._file = self._file, None
        # Its buffer may fail to be written too (cut below); a cut that fails leaves a
        # torn line, which the next start cuts.
        with contextlib.suppress(OSError):
            if file is not None:
                file.close()
        with contextlib.suppress(OSError):
            os.truncate(self.path, self._size)

    def _lines_from(self, offset: int) -> Iterator[tuple[int, bytes]]:
        if self.damage is not None and not self._size:
            return  # no line before the damage (or no regular file to read)
        end = self._size if self.damage is not None else sys.maxsize
        try:
            file = open(self.path, "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            return
        with file:
            file.seek(offset)
            for line in _whole_lines(file):
                if offset >= end:
                    return  # the damaged line and what follows it
                offset += len(line) + 1
                if line:
                    yield _seq_decoder.decode(line).seq, line

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class SessionStore:
    """``<state-dir>/sessions``: a folder per session."""

    def __init__(self, state_dir: str) -> None:
        self.folder = os.path.join(state_dir, "sessions")
        self._saved: dict[str, bytes] = {}
        """What `save` last wrote of each session: a record saved unchanged (at the end
        of every turn) is not written again, a write and a rename on the event loop that
        held every other session's events back (2 ms each on a loaded disk)."""

    def create(self) -> None:
        os.makedirs(self.folder, mode=0o700, exist_ok=True)

    def session_folder(self, session_id: str) -> str:
        assert SESSION_ID.match(session_id)
        return os.path.join(self.folder, session_id)

    def save(self, record: SessionRecord) -> None:
        """Write ``session.json`` whole (a temporary file, then renamed), unless this
        store last wrote it as it is."""
        data = msgspec.json.encode(record)
        if self._saved.get(record.id) == data:
            return
        folder = self.session_folder(record.id)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        path = os.path.join(folder, "session.json")
        with open(path + ".tmp", "wb") as file:
            file.write(data)
        os.replace(path + ".tmp", path)
        self._saved[record.id] = data

    def remove(self, session_id: str) -> None:
        """Remove a session that never started (its folder and all in it)."""
        self._saved.pop(session_id, None)
        shutil.rmtree(self.session_folder(session_id), ignore_errors=True)

    def log(self, session_id: str) -> EventLog:
        return EventLog(os.path.join(self.session_folder(session_id), "events.jsonl"))

    def records(self) -> Iterator[SessionRecord | str]:
        """Every session saved here; a folder that cannot be read as its message."""
        try:
            names = sorted(os.listdir(self.folder))
        except FileNotFoundError:
            return
        for name in names:
            if not SESSION_ID.match(name):
                continue
            path = os.path.join(self.folder, name, "session.json")
            try:
                mode = os.lstat(path).st_mode
                if not stat.S_ISREG(mode):  # a FIFO would block the server's start
                    yield f"{path}: {not_regular(mode)}, not a session record"
                    continue
                with open(path, "rb") as file:
                    record = msgspec.json.decode(file.read(), type=SessionRecord)
            except (OSError, msgspec.DecodeError) as exc:
                yield f"{path}: {exc}"
                continue
            if record.id == name:
                yield record
