"""A session file of one JSON record a line, whatever agent wrote it: loaded whole or
summarized for listing.

What is particular to an agent is its `JsonlFormat`: the record type, the normalizer, which
records are the user's prompts and which count as messages, where the session id and the
project folder are recorded, and the tokens of each response. `JsonlConversation` is a file
loaded (each agent subclasses it with its format); `gemwire.sessions._jsonl_home` is the
home around it. Claude Code's, Qwen Code's and Codex's sources are each one of these.

Read a block of whole lines at a time (memory bounded by the block and the records kept);
a line that is not a record is a `Problem`, a file that is not a regular file of at most
`MAX_SESSION_BYTES` is a `Problem` on the whole file (`gemwire.sessions._reading`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import msgspec
from msgspec import UnsetType

from gemwire._normalize.notices import notice
from gemwire.errors import SessionError
from gemwire.events import Event
from gemwire.protocol.gemini_session import Problem
from gemwire.protocol.jsonl_records import JsonlRecords
from gemwire.sessions._reading import NotRead, open_session_file
from gemwire.sessions._source import Agent, Tokens
from gemwire.sessions._summary import SessionInfo

__all__ = (
    "JsonlConversation",
    "JsonlFormat",
    "RecordNormalizer",
    "Response",
    "ResponseTokens",
    "load_jsonl",
    "problem_notices",
    "read_jsonl_info",
    "recorded_cwd",
    "recorded_session_id",
    "recorded_timestamp",
)

_BLOCK = 1 << 20

R = TypeVar("R")
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


def recorded_session_id(records: Sequence[_Stamped]) -> str | None:
    """The first ``sessionId`` recorded (Claude Code's and Qwen Code's records)."""
    return next((r.sessionId for r in records if isinstance(r.sessionId, str)), None)


def recorded_cwd(records: Sequence[_Stamped]) -> str | None:
    """The first ``cwd`` recorded."""
    return next((r.cwd for r in records if isinstance(r.cwd, str)), None)


def recorded_timestamp(record: _Stamped) -> str | None:
    return record.timestamp if isinstance(record.timestamp, str) else None


class JsonlFormat(msgspec.Struct, Generic[R], frozen=True, kw_only=True):
    """What one agent's session files are: everything `JsonlConversation` and
    `gemwire.sessions._jsonl_home.JsonlHome` need to know of it."""

    agent: Agent
    record: type[R]
    """The wire type of one line (`gemwire.wire.<agent>_session`)."""
    normalizer: Callable[[str | None, str | None], RecordNormalizer[R]]
    """Made from the session id and the project folder."""
    prompt: Callable[[R], str | None]
    """The user's prompt a record holds, else ``None`` (the agent's own user-role records,
    tool results, ...)."""
    said: Callable[[R], bool]
    """Whether a record is a message (a prompt or an answer), as listing counts them."""
    session_id: Callable[[list[R]], str | None]
    cwd: Callable[[list[R]], str | None]
    """The project folder the session ran in, as recorded."""
    timestamp: Callable[[R], str | None]
    responses: Callable[[list[R]], Iterator[Response]]
    """Every model response's tokens, each once."""
    main: Callable[[R], bool] = _everything
    """Whether a record is the session's own, not a subagent's kept in the same file."""


class JsonlConversation(msgspec.Struct, Generic[R], frozen=True, kw_only=True):
    """A session file: its records in order, and the lines skipped; each agent's subclass
    names its `JsonlFormat` (``format``)."""

    format: ClassVar[JsonlFormat[Any]]

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

    def responses(self) -> Iterator[Response]:
        """Every model response's tokens, for usage."""
        return self.format.responses(self.records)


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


def _read(path: Path, record: type[R]) -> JsonlRecords[R]:
    records = JsonlRecords(record)
    try:
        opened = open_session_file(path)
    except NotRead as exc:
        records.problems.append(Problem(line=0, message=str(exc)))
        return records
    with opened as file:
        lineno = 1
        try:
            while block := file.read(_BLOCK):
                if not block.endswith(b"\n"):
                    block += file.readline()
                lineno += records.feed_block(block, lineno)
        except OSError as exc:
            raise SessionError(f"cannot read {path}: {exc.strerror}") from exc
    if not records.records and not records.problems:
        records.problems.append(Problem(line=0, message="empty file"))
    return records


def load_jsonl(path: str | os.PathLike[str], kind: type[C]) -> C:
    """Load a session file as ``kind`` (an agent's `JsonlConversation`).

    Raises `SessionNotFound` if there is no such file, `SessionError` if it cannot be read;
    anything wrong inside the file is reported in ``problems``.
    """
    file = Path(path)
    fmt = kind.format
    read = _read(file, fmt.record)
    return kind(
        path=str(file),
        session_id=fmt.session_id(read.records),
        cwd=fmt.cwd(read.records),
        records=read.records,
        problems=read.problems,
    )


def read_jsonl_info(
    path: str | os.PathLike[str], kind: type[JsonlConversation[Any]], *, project: str | None = None
) -> SessionInfo:
    """Summarize a session file for listing (``project``: else its recorded folder)."""
    conversation = load_jsonl(path, kind)
    fmt = kind.format
    main = [r for r in conversation.records if fmt.main(r)]
    stamps = [s for s in map(fmt.timestamp, main) if s is not None]
    prompts = (fmt.prompt(r) for r in main)
    first = next((p.strip() for p in prompts if p and p.strip()), None)
    return SessionInfo(
        id=conversation.session_id,
        path=conversation.path,
        project=project or conversation.cwd,
        format="jsonl",
        kind="main",
        start_time=stamps[0] if stamps else None,
        last_updated=stamps[-1] if stamps else None,
        summary=None,
        first_prompt=first,
        messages=sum(1 for r in main if fmt.said(r)),
        resumable=conversation.session_id is not None and first is not None,
        problems=len(conversation.problems),
        agent=fmt.agent,
    )
