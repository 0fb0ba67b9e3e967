"""What the server keeps on disk: each session's ``session.json`` and ``events.jsonl``.

``<state-dir>/sessions/<id>/session.json`` is the `SessionRecord` (what a restarted
server needs to list the session and continue it); ``events.jsonl`` is the `EventLog`,
one envelope a line (``{"seq": N, "event": ...}`` or ``{"seq": N, "state": ...}``),
appended and flushed as each is produced. A torn last line (the server died while
writing it) is cut off when the log is opened again and reported (`EventLog.torn`).

    >>> import tempfile
    >>> log = EventLog(os.path.join(tempfile.mkdtemp(), "events.jsonl"))
    >>> log.append(1, b'{"seq":1,"state":{"status":"idle"}}')
    >>> log.append(2, b'{"seq":2,"state":{"status":"running"}}')
    >>> log.last_seq, [seq for seq, _ in log.read(after=1)]
    (2, [2])
    >>> log.close()
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from typing import Any

import msgspec

__all__ = ("SESSION_ID", "EventLog", "SessionRecord", "SessionStore")

SESSION_ID = re.compile(r"^s_[0-9a-f]{16}$")
"""A server session id: ``s_`` and 16 hex digits (never the agent's own id)."""

_READ_CHUNK = 1 << 16


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
    closed: bool = False


class _Seq(msgspec.Struct):
    seq: int


_seq_decoder = msgspec.json.Decoder(_Seq)


class EventLog:
    """One session's ``events.jsonl``: envelopes appended in order, read back by seq."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.torn = False
        """The file ended in a torn line, cut off when opened."""
        self.last_seq = 0
        self._file: Any = None
        self._scan()

    def _scan(self) -> None:
        if not os.path.exists(self.path):
            return
        with open(self.path, "rb") as file:
            data = file.read()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            self.torn = True
            with open(self.path, "r+b") as file:
                file.truncate(end)
        last = data.rfind(b"\n", 0, end - 1) + 1 if end else 0
        if end:
            self.last_seq = _seq_decoder.decode(data[last : end - 1]).seq

    def append(self, seq: int, envelope: bytes) -> None:
        """Write ``envelope`` (one line, no newline) and flush it."""
        if self._file is None:
            self._file = open(self.path, "ab")  # noqa: SIM115 - open while the session lives
        self._file.write(envelope + b"\n")
        self._file.flush()
        self.last_seq = seq

    def read(self, after: int = 0, limit: int | None = None) -> list[tuple[int, bytes]]:
        """The envelopes with seq > ``after`` (at most ``limit``), in order."""
        found: list[tuple[int, bytes]] = []
        for seq, line in self._lines():
            if seq > after:
                found.append((seq, line))
                if limit is not None and len(found) >= limit:
                    break
        return found

    def _lines(self) -> Iterator[tuple[int, bytes]]:
        try:
            file = open(self.path, "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            return
        with file:
            rest = b""
            while chunk := file.read(_READ_CHUNK):
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()
                for line in lines:
                    if line:
                        yield _seq_decoder.decode(line).seq, line
            # ``rest``: a line being written, or a torn one; never an envelope yet.

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class SessionStore:
    """``<state-dir>/sessions``: a folder per session."""

    def __init__(self, state_dir: str) -> None:
        self.folder = os.path.join(state_dir, "sessions")

    def create(self) -> None:
        os.makedirs(self.folder, mode=0o700, exist_ok=True)

    def session_folder(self, session_id: str) -> str:
        assert SESSION_ID.match(session_id)
        return os.path.join(self.folder, session_id)

    def save(self, record: SessionRecord) -> None:
        """Write ``session.json`` whole (a temporary file, then renamed)."""
        folder = self.session_folder(record.id)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        path = os.path.join(folder, "session.json")
        with open(path + ".tmp", "wb") as file:
            file.write(msgspec.json.encode(record))
        os.replace(path + ".tmp", path)

    def remove(self, session_id: str) -> None:
        """Remove a session that never started (its folder and all in it)."""
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
                with open(path, "rb") as file:
                    record = msgspec.json.decode(file.read(), type=SessionRecord)
            except (OSError, msgspec.DecodeError) as exc:
                yield f"{path}: {exc}"
                continue
            if record.id == name:
                yield record
