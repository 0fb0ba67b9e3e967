"""One session file: loaded whole (`load_session`) or summarized for listing (`read_session_info`).

Both read the file in blocks of whole lines, so a huge session is never held as one string,
and both accept every format Gemini CLI has written: append-only ``.jsonl`` (0.39 and newer)
and the single pretty-printed ``.json`` (older), in either project-folder layout. A line the
CLI is still writing, a corrupt line or an empty file becomes a `Problem` (and a ``notice``
event), never an exception; only a file that cannot be read at all raises `SessionError`.

Only a regular file of at most `MAX_SESSION_BYTES` is read: anything else named like a session
(a FIFO, a device, a socket, a folder, a huge file) is a `Problem` on it, never opened for
reading in a way that could block or run without end.
"""

from __future__ import annotations

import gc
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec

from gemwire._normalize.gemini_session import SessionNormalizer
from gemwire._normalize.notices import notice
from gemwire._portable import O_CLOEXEC, O_NONBLOCK
from gemwire.errors import SessionError, SessionNotFound
from gemwire.events import Event
from gemwire.protocol.gemini_messages import SessionMessage
from gemwire.protocol.gemini_session import MessageSummary, Problem, RecordReplay, legacy_record
from gemwire.wire.gemini_session import SESSION_FILE_PREFIX, MessageRecord

__all__ = (
    "MAX_SESSION_BYTES",
    "Conversation",
    "SessionInfo",
    "load_session",
    "read_session_info",
    "short_id_of",
)

Format = Literal["json", "jsonl"]
Kind = Literal["main", "subagent"]

# Read this much at a time, then on to the end of the last line: memory bounded by the block.
# Measured with bench/sessions.py: 256 KiB slowed listing by a quarter, 4 MiB slowed loading.
_BLOCK = 1 << 20

MAX_SESSION_BYTES = 512 << 20
"""A session file larger than this (512 MiB) is a `Problem`, not read: loading holds about a
file's size in memory, and the largest sessions measured are a few tens of MB."""


def short_id_of(file_name: str) -> str | None:
    """The 8-character id in ``session-<time>-<id8>.json[l]`` (Gemini's cleanup matches on it)."""
    if not file_name.startswith(SESSION_FILE_PREFIX):
        return None
    stem = file_name.removesuffix(".jsonl").removesuffix(".json")
    if stem == file_name:
        return None
    tail = stem.rsplit("-", 1)[-1]
    return tail if len(tail) == 8 and tail.isascii() and tail.isalnum() else None


class SessionInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A session file, summarized without loading its messages.

    ``resumable`` is Gemini's own verdict on this file: whether ``gemini --resume`` lists it
    (a main session with a session id and at least one real prompt or model message with
    substance). Files that are not, e.g. the stubs a resume leaves behind, are deleted by
    Gemini's retention cleanup together with every file sharing their ``short_id``.
    ``index`` is the number ``gemini --resume <n>`` takes; set by `GeminiHome.sessions`.
    ``messages`` counts the messages of the final conversation (after upserts and rewinds).
    """

    id: str | None
    path: str
    project: str | None
    format: Format
    kind: Kind
    start_time: str | None
    last_updated: str | None
    summary: str | None
    first_prompt: str | None
    messages: int
    resumable: bool
    problems: int = 0
    index: int | None = None
    parent_id: str | None = None
    subagents: list[SessionInfo] = []

    @property
    def short_id(self) -> str | None:
        return short_id_of(os.path.basename(self.path))


class Conversation(msgspec.Struct, frozen=True, kw_only=True):
    """A session file's final state: metadata, messages in order, and what was skipped."""

    path: str
    format: Format
    session_id: str | None
    project_hash: str | None
    start_time: str | None
    last_updated: str | None
    summary: str | None
    kind: Kind
    directories: list[str]
    messages: Sequence[SessionMessage]
    """In order; each decoded from its recorded line whenever it is read (see `Messages`),
    unless loaded with ``keep_originals=True``."""
    problems: list[Problem]
    resumable: bool
    originals: list[Any] = []
    """Each message exactly as recorded, unknown fields included (``keep_originals=True``)."""
    parent_id: str | None = None
    """A subagent's parent session, and the ``call_id`` of the parent's call that ran it
    (every event of a subagent carries it as ``parent_call_id``)."""
    parent_call_id: str | None = None

    def events(self, *, cwd: str | None = None, agent: str = "gemini") -> Iterator[Event]:
        """The normalized events: the same vocabulary a live run streams (see docs/sessions.md).

        ``cwd`` (the project root) resolves the relative paths the model used. Each message
        is decoded, mapped and let go in turn: iterating holds one message at a time.
        """
        events = self._events(cwd=cwd, agent=agent)
        parent = self.parent_call_id
        if parent is None:
            return events  # not wrapped: a generator less for every event to pass through
        return (msgspec.structs.replace(event, parent_call_id=parent) for event in events)

    def _events(self, *, cwd: str | None, agent: str) -> Iterator[Event]:
        sid = self.session_id
        normalizer = SessionNormalizer(session_id=sid, cwd=cwd, agent=agent)
        yield from normalizer.start()  # session_started, then the problems, in line order
        # Event text is Unicode: a file name that is not UTF-8 shows U+FFFD for its bad bytes.
        path = self.path.encode(errors="surrogateescape").decode(errors="replace")
        for problem in self.problems:
            where = f"line {problem.line}: " if problem.line else ""
            yield notice(
                agent,
                sid,
                f"{path}: {where}{problem.message}",
                severity="warning" if sid else "error",
            )
        feed = normalizer.feed
        for message in self.messages:
            yield from feed(message)
        yield from normalizer.finish()


class _NotRead(Exception):
    """Why a file named like a session is not read (the `Problem` on it)."""


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _check(info: os.stat_result, limit: int) -> None:
    if not stat.S_ISREG(info.st_mode):
        kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a file")
        raise _NotRead(f"not a regular file ({kind}): not read")
    if info.st_size > limit:
        raise _NotRead(f"{info.st_size:,} bytes, over the {limit:,}-byte limit: not read")


def _open(path: Path, limit: int = MAX_SESSION_BYTES) -> Any:
    """``path`` open for reading if it is a regular file of at most ``limit`` bytes.

    Raises `_NotRead` for anything else. The type is checked before opening (opening a
    device can act on it; opening a FIFO blocks until a writer comes); O_NONBLOCK and the
    check again on the open file cover one swapped in between (a regular file reads the
    same with it).
    """
    try:
        _check(os.stat(path), limit)
        fd = os.open(path, os.O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    except FileNotFoundError as exc:
        raise SessionNotFound(f"no session file at {path}") from exc
    except OSError as exc:
        raise SessionError(f"cannot read {path}: {exc.strerror}") from exc
    except ValueError as exc:  # a NUL in the path: no file can have that name
        raise SessionNotFound(f"no session file at {path}") from exc
    try:
        _check(os.fstat(fd), limit)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_small_file(path: Path, limit: int) -> bytes | None:
    """The bytes of a regular file of at most ``limit`` bytes; ``None`` for anything else
    (missing, unreadable, not a regular file, larger)."""
    try:
        with _open(path, limit) as file:
            data: bytes = file.read(limit + 1)
    except (SessionError, _NotRead, OSError):
        return None
    return data if len(data) <= limit else None  # it grew since it was opened


def _replay(
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
        opened = _open(path)
    except _NotRead as exc:
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


def _str(metadata: dict[str, Any], key: str) -> str | None:
    value = metadata.get(key)
    return value if isinstance(value, str) else None


def _kind(metadata: dict[str, Any]) -> Kind:
    return "subagent" if metadata.get("kind") == "subagent" else "main"


def load_session(path: str | os.PathLike[str], *, keep_originals: bool = False) -> Conversation:
    """Load a session file of any format Gemini CLI writes, read a block of lines at a time.

    ``keep_originals`` also keeps every message exactly as recorded (for exports), and every
    message decoded; without it, a message is kept as its recorded line (a third of the
    memory) and decoded whenever ``messages`` or `Conversation.events` reads it.

    Raises `SessionNotFound` if there is no such file, `SessionError` if it cannot be read;
    anything wrong inside the file is reported in ``problems``.
    """
    file = Path(path)
    replay, fmt = _replay(file, summary=False, keep_raw=keep_originals, lines=not keep_originals)
    meta = replay.metadata
    directories = meta.get("directories")
    parent = None
    if _kind(meta) == "subagent" and isinstance(meta.get("sessionId"), str):
        from gemwire.sessions._subagents import parent_call  # it reads files with _replay

        parent = parent_call(file, meta["sessionId"])
    return Conversation(
        path=str(file),
        format=fmt,
        session_id=_str(meta, "sessionId"),
        project_hash=_str(meta, "projectHash") or None,
        start_time=_str(meta, "startTime"),
        last_updated=_str(meta, "lastUpdated"),
        summary=_str(meta, "summary"),
        kind=_kind(meta),
        directories=[d for d in directories if isinstance(d, str)]
        if isinstance(directories, list)
        else [],
        messages=replay.messages,
        problems=replay.problems,
        resumable=_gemini_lists(replay),
        originals=replay.originals if keep_originals else [],
        parent_id=parent[0] if parent else None,
        parent_call_id=parent[1] if parent else None,
    )


def _gemini_lists(replay: RecordReplay) -> bool:
    # getAllSessionFiles: a session id, resumable content, and not a subagent.
    return (
        bool(replay.metadata.get("sessionId"))
        and replay.resumable
        and (_kind(replay.metadata) == "main")
    )


def read_session_info(
    path: str | os.PathLike[str], *, project: str | None = None, parent_id: str | None = None
) -> SessionInfo:
    """Summarize a session file for listing: metadata, counts, the first real prompt."""
    file = Path(path)
    replay, fmt = _replay(file, summary=True)
    meta = replay.metadata
    summaries: Sequence[MessageSummary] = replay.messages
    first_prompt = next((m.prompt for m in summaries if m.prompt), None)
    return SessionInfo(
        id=_str(meta, "sessionId"),
        path=str(file),
        project=project,
        format=fmt,
        kind=_kind(meta),
        start_time=_str(meta, "startTime"),
        last_updated=_str(meta, "lastUpdated"),
        summary=_str(meta, "summary"),
        first_prompt=first_prompt.strip() if first_prompt else None,
        messages=len(summaries),
        resumable=_gemini_lists(replay),
        problems=len(replay.problems),
        parent_id=parent_id,
    )
