"""A session file of one JSON record a line, whatever agent wrote it: loaded whole or
summarized for listing and usage.

What is particular to an agent is its `JsonlFormat`: the record type, the normalizer, which
records are the user's prompts and which count as messages, where the session id and the
project folder are recorded, and the tokens of each response. `JsonlConversation` is a file
loaded (each agent subclasses it with its format); `gemwire.sessions._jsonl_home` is the
home around it. Claude Code's, Qwen Code's and Codex's sources are each one of these.

A file is read a block of whole lines at a time, each line decoded where it lies (a
`Problem` for one that is not a record); a file that is not a regular file of at most
`MAX_SESSION_BYTES` is a `Problem` on the whole file (`gemwire.sessions._reading`).
Loading keeps every record. Listing (`read_jsonl_info`) and usage (`read_jsonl_usage`) keep
none: they decode each line into the format's `light` record (the few fields they read;
texts, tool inputs and outputs skipped unbuilt) and summarize as they go, so a file's answer
of hundreds of MB costs about its line, once.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, ClassVar, Generic, NamedTuple, Protocol, TypeVar

import msgspec
from msgspec import UnsetType

from gemwire._normalize.notices import notice
from gemwire.errors import SessionError
from gemwire.events import Event
from gemwire.protocol.gemini_session import Problem
from gemwire.protocol.jsonl_records import JsonlRecords, lines_in
from gemwire.sessions._reading import NotRead, open_session_file
from gemwire.sessions._source import Agent, Tokens
from gemwire.sessions._summary import SessionInfo

__all__ = (
    "FileUsage",
    "JsonlConversation",
    "JsonlFormat",
    "RecordNormalizer",
    "Response",
    "ResponseTokens",
    "load_jsonl",
    "problem_notices",
    "read_jsonl_info",
    "read_jsonl_usage",
    "stated_cwd",
    "stated_session_id",
    "stated_timestamp",
)

_BLOCK = 1 << 20

R = TypeVar("R")
L = TypeVar("L")
T = TypeVar("T")
R_contra = TypeVar("R_contra", contravariant=True)
C = TypeVar("C", bound="JsonlConversation[Any]")

Response = tuple[Any, Any, Tokens, int, int]
"""A model response for usage: timestamp, model, tokens, thoughts, tool (`SessionUsage`)."""


class ResponseTokens(msgspec.Struct, frozen=True, gc=False):
    """The tokens of one response (a `Tokens`)."""

    input: int
    output: int
    cached: int
    total: int


class RecordNormalizer(Protocol[R_contra]):
    """A saved session's records in, events out (`gemwire._normalize`)."""

    def start(self) -> list[Event]: ...
    def feed(self, record: R_contra) -> list[Event]: ...
    def finish(self) -> list[Event]: ...


def _everything(record: object) -> bool:
    return True


class _Stamped(Protocol):
    """A record that says its session, folder and time on every line (upstream names)."""

    @property
    def sessionId(self) -> str | UnsetType: ...
    @property
    def cwd(self) -> str | UnsetType: ...
    @property
    def timestamp(self) -> str | UnsetType: ...


def stated_session_id(record: _Stamped) -> str | None:
    """The ``sessionId`` a record states (Claude Code's and Qwen Code's records)."""
    return record.sessionId if isinstance(record.sessionId, str) else None


def stated_cwd(record: _Stamped) -> str | None:
    """The ``cwd`` a record states."""
    return record.cwd if isinstance(record.cwd, str) else None


def stated_timestamp(record: _Stamped) -> str | None:
    return record.timestamp if isinstance(record.timestamp, str) else None


class JsonlFormat(msgspec.Struct, Generic[R, L], frozen=True, kw_only=True):
    """What one agent's session files are: everything `JsonlConversation` and
    `gemwire.sessions._jsonl_home.JsonlHome` need to know of it.

    ``R`` is a line loaded, ``L`` a line summarized (`light`); the functions that take
    either read only the fields both have.
    """

    agent: Agent
    record: type[R]
    """The wire type of one line (`gemwire.wire.<agent>_session`)."""
    light: type[L]
    """What listing and usage decode of a line: the fields they read, the texts skipped."""
    normalizer: Callable[[str | None, str | None], RecordNormalizer[R]]
    """Made from the session id and the project folder."""
    prompt: Callable[[L], str | None]
    """The user's prompt a record holds, else ``None`` (the agent's own user-role records,
    tool results, ...)."""
    said: Callable[[L], bool]
    """Whether a record is a message (a prompt or an answer), as listing counts them."""
    session_id: Callable[[R | L], str | None]
    """The session's id a record states (the first one stated is the session's)."""
    cwd: Callable[[R | L], str | None]
    """The project folder the session ran in, as a record states it (the first)."""
    timestamp: Callable[[R | L], str | None]
    responses: Callable[[Iterable[L]], Iterator[Response]]
    """Every model response's tokens, each once, from the records in order."""
    main: Callable[[R | L], bool] = _everything
    """Whether a record is the session's own, not a subagent's kept in the same file."""


class JsonlConversation(msgspec.Struct, Generic[R], frozen=True, kw_only=True):
    """A session file: its records in order, and the lines skipped; each agent's subclass
    names its `JsonlFormat` (``format``)."""

    format: ClassVar[JsonlFormat[Any, Any]]

    path: str
    session_id: str | None
    cwd: str | None
    records: list[R]
    problems: list[Problem]

    @property
    def agent(self) -> Agent:
        return self.format.agent

    @property
    def start_time(self) -> str | None:
        """When the session's first record was written, as recorded."""
        fmt = self.format
        return next((t for r in self.records if fmt.main(r) and (t := fmt.timestamp(r))), None)

    @property
    def last_updated(self) -> str | None:
        fmt = self.format
        stamps = (fmt.timestamp(r) for r in reversed(self.records) if fmt.main(r))
        return next((t for t in stamps if t), None)

    @property
    def summary(self) -> str | None:
        """None: these agents keep no summary of a session."""
        return None

    def events(self, *, cwd: str | None = None) -> Iterator[Event]:
        """The normalized events (see docs/sessions.md); ``cwd`` defaults to the session's."""
        sid = self.session_id
        normalizer = self.format.normalizer(sid, cwd or self.cwd)
        yield from normalizer.start()
        yield from problem_notices(self.agent, sid, self.path, self.problems)
        for record in self.records:
            yield from normalizer.feed(record)
        yield from normalizer.finish()


def problem_notices(
    agent: str, session_id: str | None, path: str, problems: list[Problem]
) -> Iterator[Event]:
    """What was skipped in a session, as notices (errors when nothing identifies it)."""
    shown = path.encode(errors="surrogateescape").decode(errors="replace")
    for problem in problems:
        where = f"line {problem.line}: " if problem.line else ""
        yield notice(
            agent,
            session_id,
            f"{shown}: {where}{problem.message}",
            severity="warning" if session_id else "error",
        )


def _blocks(file: BinaryIO) -> Iterator[bytearray]:
    """The file's whole lines, a block of about `_BLOCK` bytes at a time (the last line may
    lack its newline). A longer line grows its block in place: it is never copied whole."""
    pending = bytearray()
    while chunk := file.read(_BLOCK):
        searched = len(pending)
        pending += chunk
        end = pending.rfind(b"\n", searched)
        if end < 0:
            continue
        block, pending = pending, pending[end + 1 :]
        del block[end + 1 :]
        yield block
    if pending:
        yield pending


def _records(path: str, lines: JsonlRecords[T]) -> Iterator[T]:
    """The records of the file at ``path``, one at a time; what is wrong in ``lines``'s
    problems (a file that is not read, an empty one: on line 0).

    Raises `SessionNotFound` if there is no such file, `SessionError` if it cannot be read.
    """
    try:
        opened = open_session_file(Path(path))
    except NotRead as exc:
        lines.problems.append(Problem(line=0, message=str(exc)))
        return
    found = False
    with opened as file:
        number = 1
        try:
            for block in _blocks(file):
                records = lines.decoded(block, number)
                found = found or bool(records)
                yield from records
                number += lines_in(block)
        except OSError as exc:
            raise SessionError(f"cannot read {path}: {exc.strerror}") from exc
    if not found and not lines.problems:
        lines.problems.append(Problem(line=0, message="empty file"))


def load_jsonl(path: str | os.PathLike[str], kind: type[C]) -> C:
    """Load a session file as ``kind`` (an agent's `JsonlConversation`).

    Raises `SessionNotFound` if there is no such file, `SessionError` if it cannot be read;
    anything wrong inside the file is reported in ``problems``.
    """
    file = os.fspath(path)
    fmt = kind.format
    lines = JsonlRecords(fmt.record)
    records = list(_records(file, lines))
    return kind(
        path=file,
        session_id=next(filter(None, map(fmt.session_id, records)), None),
        cwd=next(filter(None, map(fmt.cwd, records)), None),
        records=records,
        problems=lines.problems,
    )


class _Seen(Generic[L]):
    """What a pass over a file's light records saw of the session: its id and folder (the
    first stated), when its first record was written."""

    __slots__ = ("cwd", "fmt", "session_id", "start")

    def __init__(self, fmt: JsonlFormat[Any, L]) -> None:
        self.fmt = fmt
        self.session_id: str | None = None
        self.cwd: str | None = None
        self.start: str | None = None

    def see(self, record: L) -> None:
        fmt = self.fmt
        if self.session_id is None:
            self.session_id = fmt.session_id(record)
        if self.cwd is None:
            self.cwd = fmt.cwd(record)
        if self.start is None:
            self.start = fmt.timestamp(record)

    def passing(self, records: Iterable[L]) -> Iterator[L]:
        """``records``, each seen on its way."""
        see = self.see
        for record in records:
            see(record)
            yield record


def read_jsonl_info(
    path: str | os.PathLike[str], kind: type[JsonlConversation[Any]], *, project: str | None = None
) -> SessionInfo:
    """Summarize a session file for listing (``project``: else its recorded folder), one
    light record at a time."""
    fmt = kind.format
    file = os.fspath(path)
    lines = JsonlRecords(fmt.light)
    seen: _Seen[Any] = _Seen(fmt)
    see, main, timestamp, said = seen.see, fmt.main, fmt.timestamp, fmt.said
    first_stamp: str | None = None
    last_stamp: str | None = None
    first: str | None = None
    messages = 0
    for record in _records(file, lines):
        see(record)
        if not main(record):
            continue
        stamp = timestamp(record)
        if stamp is not None:
            first_stamp = first_stamp or stamp
            last_stamp = stamp
        if first is None:
            prompt = fmt.prompt(record)
            first = prompt.strip() if prompt and prompt.strip() else None
        messages += said(record)
    return SessionInfo(
        id=seen.session_id,
        path=file,
        project=project or seen.cwd,
        format="jsonl",
        kind="main",
        start_time=first_stamp,
        last_updated=last_stamp,
        summary=None,
        first_prompt=first,
        messages=messages,
        resumable=seen.session_id is not None and first is not None,
        problems=len(lines.problems),
        agent=fmt.agent,
    )


class FileUsage(NamedTuple):
    """A session file's model responses (`read_jsonl_usage`)."""

    session_id: str | None
    cwd: str | None
    start: str | None
    """When its first record was written."""
    responses: list[Response]
    problems: int


def read_jsonl_usage(path: str | os.PathLike[str], kind: type[JsonlConversation[Any]]) -> FileUsage:
    """A session file's model responses, read one light record at a time (the responses
    are kept: a few numbers each).

    Raises `SessionNotFound` if there is no such file, `SessionError` if it cannot be read.
    """
    fmt = kind.format
    lines = JsonlRecords(fmt.light)
    seen: _Seen[Any] = _Seen(fmt)
    responses = list(fmt.responses(seen.passing(_records(os.fspath(path), lines))))
    return FileUsage(seen.session_id, seen.cwd, seen.start, responses, len(lines.problems))
