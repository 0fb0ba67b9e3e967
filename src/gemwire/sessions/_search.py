"""`search`: the saved sessions of every agent whose prompts, answers or tool calls hold a text.

Each source's sessions are listed (its listing index makes that quick), newest first; each
file's passages (`Passage`: prompt, answer, tool input, tool output) come from the search
index while the file is unchanged, else from its events, and are then kept there. The text
is matched literally, ignoring case. Results come as they are found, one `SearchHit` per
session (its subagents' passages count as its own), so the first arrive before the whole
home is read.
"""

from __future__ import annotations

import itertools
import os
import shlex
from collections.abc import Generator, Iterable, Iterator
from datetime import date, datetime, tzinfo
from typing import Any

import msgspec

from gemwire._normalize.masking import Masker, known_secrets
from gemwire.errors import SessionError
from gemwire.events import MessageDelta, ToolCallFinished, ToolCallStarted, UserMessage
from gemwire.sessions._registry import Home, sources
from gemwire.sessions._search_index import Field, Passage, SearchIndex
from gemwire.sessions._source import SessionSource
from gemwire.sessions._summary import SessionInfo
from gemwire.sessions._usage import Bound, aware, bound_of

__all__ = ("SearchHit", "SearchMatch", "passages_of", "search")

SHOWN_MATCHES = 3
"""Matches a hit quotes; ``matches`` counts them all."""

_AROUND = 60
"""Characters quoted on each side of a match."""


class SearchMatch(msgspec.Struct, frozen=True, kw_only=True):
    """Where a session holds the text: which passage, and the text around it."""

    field: Field
    text: str
    """The match with up to 60 characters each side, whitespace runs as one space; ``…``
    where the passage goes on."""


class SearchHit(msgspec.Struct, frozen=True, kw_only=True):
    """A session holding the text: enough to name it (`gemwire sessions export`) and quote it."""

    agent: str
    id: str | None
    path: str
    project: str | None
    start_time: str | None
    last_updated: str | None
    title: str | None
    """The session's summary, else its first prompt."""
    matches: int
    """How many passages hold the text (its subagents' included)."""
    quotes: list[SearchMatch]
    """The first few (`SHOWN_MATCHES`)."""

    def open_command(self) -> str:
        """The command that exports the session as a page (by id in its project, else by
        path)."""
        ref = ["--project", self.project] if self.project and self.id else []
        name = self.id if ref else self.path
        words = ["gemwire", "sessions", "export", name or "", "--agent", self.agent, *ref]
        return shlex.join([*words, "--format", "html", "-o", "session.html"])

    def document(self) -> dict[str, Any]:
        r"""The hit as ``gemwire sessions search --json`` prints it and ``gemwire serve``
        answers it: its fields and ``open`` (`open_command`); a file name that is not UTF-8
        has its bad bytes made U+FFFD, as JSON can carry it.

        >>> hit = SearchHit(agent="gemini", id=None, path="/h/s\udcff.json", project=None,
        ...     start_time=None, last_updated=None, title="hi", matches=1, quotes=[])
        >>> hit.document()["path"] == "/h/s\ufffd.json"
        True
        >>> hit.document()["open"] == "gemwire sessions export '/h/s\ufffd.json' --agent gemini "\
        ...     "--format html -o session.html"
        True
        """
        path = self.path.encode(errors="surrogateescape").decode(errors="replace")
        safe = msgspec.structs.replace(self, path=path)
        return {**msgspec.to_builtins(safe), "open": safe.open_command()}


def search(
    text: str,
    home: Home = None,
    *,
    agent: str = "all",
    project: str | os.PathLike[str] | None = None,
    since: Bound | None = None,
    until: Bound | None = None,
    tz: tzinfo | None = None,
    secrets: Iterable[str] = (),
) -> Generator[SearchHit, None, None]:
    """The sessions holding ``text`` (literally, in any case), each source's newest first.

    Every hit has the secret values of this process's environment (`known_secrets`) and
    ``secrets`` masked in all its strings, as every export and the server have them: the
    command line and ``gemwire serve`` both show hits as this masks them.

    Args:
        text: what to look for; never a pattern (``.*`` finds a dot and a star).
        home: sources, or the folder holding the agents' folders (as `usage` takes it).
        agent: whose sessions: ``gemini``, ``claude``, ``codex``, ``qwen``, ``opencode`` or
            ``all``.
        project: only this project's sessions (its root folder).
        since, until: only sessions active on or after, up to, this day (a `date`, whole, in
            ``tz``) or moment (a `datetime`), as `usage` takes them.
        secrets: more values to mask (the server's token).

    >>> list(search("hello", "/nonexistent"))
    []
    """
    needle = text.lower()
    if not needle:
        return
    masker = Masker([*known_secrets(os.environ), *secrets])
    since_day, since_at = bound_of(since, tz)
    until_day, until_at = bound_of(until, tz)
    for found in sources(agent, home):
        index = SearchIndex(found.agent, os.fspath(found.home))
        listed = found.sessions(project) if project is not None else found.all_sessions()
        complete = project is None
        try:
            for info in sorted(listed, key=lambda i: i.last_updated or "", reverse=True):
                if not _active(info, since_day, since_at, until_day, until_at, tz):
                    complete = False
                    continue
                hit = _hit(found, index, info, needle)
                if hit is not None:
                    yield masker.data(hit)
        except GeneratorExit:
            complete = False
            raise
        finally:
            index.save(complete=complete)


def _hit(
    source: SessionSource, index: SearchIndex, info: SessionInfo, needle: str
) -> SearchHit | None:
    matches = 0
    quotes: list[SearchMatch] = []
    for path in source.files(info):
        for passage in _passages(source, index, path, info.project):
            where = passage.text.lower().find(needle)
            if where < 0:
                continue
            matches += 1
            if len(quotes) < SHOWN_MATCHES:
                quotes.append(
                    SearchMatch(field=passage.field, text=_quote(passage.text, where, len(needle)))
                )
    if not matches:
        return None
    return SearchHit(
        agent=source.agent,
        id=info.id,
        path=info.path,
        project=info.project,
        start_time=info.start_time,
        last_updated=info.last_updated,
        title=info.summary or info.first_prompt,
        matches=matches,
        quotes=quotes,
    )


def _passages(
    source: SessionSource, index: SearchIndex, path: str, project: str | None
) -> list[Passage]:
    stamp = source.stamp(path)
    if stamp is None:
        return []
    kept = index.get(path, stamp)
    if kept is not None:
        return kept
    try:
        passages = list(passages_of(source.load(path).events(cwd=project)))
    except SessionError:  # gone or unreadable since it was listed: nothing to find in it
        return []
    index.put(path, stamp, passages)
    return passages


def passages_of(events: Iterable[Any]) -> Iterator[Passage]:
    """What search looks in: each prompt, answer (its deltas joined), tool input (its texts,
    one a line) and tool output.

    >>> from gemwire.events import MessageDelta, UserMessage
    >>> said = [UserMessage(agent="claude", text="hi"), MessageDelta(agent="claude", text="Hel"),
    ...         MessageDelta(agent="claude", text="lo")]
    >>> [p.text for p in passages_of(said)]
    ['hi', 'Hello']
    """
    for is_answer, run in itertools.groupby(events, lambda e: isinstance(e, MessageDelta)):
        if is_answer:
            yield _passage("answer", "".join(event.text for event in run))
            continue
        for event in run:
            if isinstance(event, UserMessage):
                yield _passage("prompt", event.text)
            elif isinstance(event, ToolCallStarted):
                strings = "\n".join(_strings(event.input))
                if strings:
                    yield _passage("tool input", strings)
            elif isinstance(event, ToolCallFinished) and event.output:
                yield _passage("tool output", event.output)


def _passage(field: Field, text: str) -> Passage:
    # A text cut inside a surrogate pair cannot be written to the index as it is.
    return Passage(field, text.encode(errors="replace").decode())


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _quote(text: str, where: int, length: int) -> str:
    if len(text.lower()) != len(text):  # lowercasing moved the match (İ): quote the start
        where, length = 0, 0
    start, end = max(0, where - _AROUND), min(len(text), where + length + _AROUND)
    quoted = " ".join(text[start:end].split())
    return ("…" if start else "") + quoted + ("…" if end < len(text) else "")


def _active(
    info: SessionInfo,
    since_day: date | None,
    since_at: datetime | None,
    until_day: date | None,
    until_at: datetime | None,
    tz: tzinfo | None,
) -> bool:
    """Whether the session was active between the bounds: it was last updated on or after
    ``since`` and started on or before ``until``."""
    if since_day is None and until_day is None:
        return True
    last = _moment(info.last_updated or info.start_time, tz)
    first = _moment(info.start_time or info.last_updated, tz)
    if last is None or first is None:
        return False
    if since_day is not None and (
        last.astimezone(tz).date() < since_day or (since_at is not None and last < since_at)
    ):
        return False
    return until_day is None or not (
        first.astimezone(tz).date() > until_day or (until_at is not None and first > until_at)
    )


def _moment(timestamp: str | None, tz: tzinfo | None) -> datetime | None:
    try:
        return aware(datetime.fromisoformat(timestamp or ""), tz)
    except ValueError:
        return None
