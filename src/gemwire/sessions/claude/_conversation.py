"""One Claude Code session file: loaded whole (`load_claude_session`) or summarized.

Read a block of whole lines at a time (memory bounded by the block and the records kept);
a line that is not a record is a `Problem`, a file that is not a regular file of at most
`MAX_SESSION_BYTES` is a `Problem` on the whole file (`gemwire.sessions._reading`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import msgspec

from gemwire._normalize.claude_session import ClaudeSessionNormalizer
from gemwire._normalize.notices import notice
from gemwire.errors import SessionError
from gemwire.events import Event
from gemwire.protocol.gemini_session import Problem
from gemwire.protocol.jsonl_records import JsonlRecords
from gemwire.sessions._reading import NotRead, open_session_file
from gemwire.sessions._summary import SessionInfo
from gemwire.wire.claude_session import Message, Record

__all__ = ("ClaudeConversation", "load_claude_session", "read_claude_info")

_BLOCK = 1 << 20


class ClaudeConversation(msgspec.Struct, frozen=True, kw_only=True):
    """A Claude Code session file: its records in order, and the lines skipped."""

    path: str
    session_id: str | None
    cwd: str | None
    records: list[Record]
    problems: list[Problem]

    def events(self, *, cwd: str | None = None) -> Iterator[Event]:
        """The normalized events (see docs/sessions.md); ``cwd`` defaults to the session's."""
        sid = self.session_id
        normalizer = ClaudeSessionNormalizer(session_id=sid, cwd=cwd or self.cwd)
        yield from normalizer.start()
        path = self.path.encode(errors="surrogateescape").decode(errors="replace")
        for problem in self.problems:
            where = f"line {problem.line}: " if problem.line else ""
            yield notice(
                "claude",
                sid,
                f"{path}: {where}{problem.message}",
                severity="warning" if sid else "error",
            )
        for record in self.records:
            yield from normalizer.feed(record)
        yield from normalizer.finish()


def _read(path: Path) -> JsonlRecords[Record]:
    records = JsonlRecords(Record)
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


def load_claude_session(path: str | os.PathLike[str]) -> ClaudeConversation:
    """Load a Claude Code session file.

    Raises `SessionNotFound` if there is no such file, `SessionError` if it cannot be read;
    anything wrong inside the file is reported in ``problems``.
    """
    file = Path(path)
    read = _read(file)
    cwd = next((r.cwd for r in read.records if isinstance(r.cwd, str)), None)
    return ClaudeConversation(
        path=str(file),
        session_id=read.session_id,
        cwd=cwd,
        records=read.records,
        problems=read.problems,
    )


def _prompt(message: Message) -> str | None:
    content = message.content
    if isinstance(content, str):
        return content
    return next((b.text for b in content if b.type == "text" and isinstance(b.text, str)), None)


def read_claude_info(path: str | os.PathLike[str], *, project: str | None = None) -> SessionInfo:
    """Summarize a Claude Code session file for listing (``project``: else its ``cwd``)."""
    conversation = load_claude_session(path)
    main = [r for r in conversation.records if not r.isSidechain]
    talk = [r for r in main if r.type in ("user", "assistant") and isinstance(r.message, Message)]
    stamps = [r.timestamp for r in main if isinstance(r.timestamp, str)]
    prompts = (
        _prompt(r.message)
        for r in talk
        if r.type == "user" and isinstance(r.message, Message) and r.isMeta is not True
    )
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
        messages=len(talk),
        resumable=conversation.session_id is not None and first is not None,
        problems=len(conversation.problems),
        agent="claude",
    )
