"""Live reasoning for headless runs: follow the session file the CLI is writing.

Gemini CLI's stream-json output never carries the model's thoughts, nor the exact diff of
an edit; the session file it writes during the run has both (``thoughts`` and the
``FileDiff`` on each ``gemini`` message, written when a model response is complete). With
``GeminiOptions(follow_session_file=True)`` the runner asks a `SessionFollower` for what is
new in that file each time it has stdout events to send, and once more before the
``turn_completed``: the thoughts come as ``thought_delta`` events, an edit's exact change as
``file_changed`` (``derived: false``), all marked ``origin: "session_file"``, each batch
ahead of the stream events that arrived with it. Nothing else is read from the file.

The file is found by the session id the stream announced (files named with its short id,
whose header has that id); only the bytes appended since the last look are read, and only
messages recorded since the run started count (a resumed session's file holds its history).
The last model response's prompt size gives the context figure of ``turn_completed``.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Sequence
from datetime import datetime

import msgspec

from gemwire._normalize.gemini_session import file_diff_of, thought_text
from gemwire._normalize.notices import notice
from gemwire.events import Event, FileChanged, ModelUsage, ThoughtDelta, TurnCompleted
from gemwire.protocol._lone_surrogates import decode_repaired
from gemwire.sessions import GeminiHome, PriceTable, load_prices, short_id_of
from gemwire.sessions.pricing import model_usage_cost, usage_cost
from gemwire.wire.gemini_session import MessageRecord

__all__ = ("SessionFollower", "files_changed", "with_estimates", "with_model_estimates")

_MESSAGE_START = b'{"id":'
_SEARCH_EVERY = 1.0
_decode = msgspec.json.Decoder(MessageRecord).decode


@functools.cache
def _prices() -> PriceTable:
    return load_prices()


def with_model_estimates(turn: TurnCompleted, model: str | None) -> TurnCompleted:
    """``turn_completed`` of an ACP turn with its usage's estimated cost and the model's
    context window, where the price table has them: usage counted model by model (Gemini
    CLI's ``_meta.quota``) is priced as `with_estimates` prices it; usage without models
    (ACP's ``usage``) as ``model``, the session's model, when it is known."""
    usage = turn.usage
    if usage is None:
        return turn
    table = _prices()
    models = list(usage.by_model) or ([model] if model else [])
    if usage.by_model:
        cost = usage_cost(table, usage)
    elif model:
        counts = ModelUsage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cached_tokens=usage.cached_tokens,
            total_tokens=usage.total_tokens,
        )
        cost = model_usage_cost(table, model, counts)
    else:
        cost = None
    fields: dict[str, object] = {}
    if cost is not None:
        fields["cost_usd"] = cost
    price = table.price(models[0]) if len(models) == 1 else None
    if price is not None and price.context_window is not None:
        fields["context_window"] = price.context_window
    if not fields:
        return turn
    return msgspec.structs.replace(turn, usage=msgspec.structs.replace(usage, **fields))


def with_estimates(turn: TurnCompleted, follower: SessionFollower | None) -> TurnCompleted:
    """``turn_completed`` with its usage's estimated cost (where every model has a price)
    and, when a session file was followed, the context figure."""
    usage = turn.usage
    if usage is None:
        return turn
    fields: dict[str, object] = {}
    cost = usage_cost(_prices(), usage)
    if cost is not None:
        fields["cost_usd"] = cost
    if follower is not None and follower.context is not None:
        model, tokens = follower.context
        fields["context_tokens"] = tokens
        price = _prices().price(model)
        if price is not None and price.context_window is not None:
            fields["context_window"] = price.context_window
    if not fields:
        return turn
    return msgspec.structs.replace(turn, usage=msgspec.structs.replace(usage, **fields))


def files_changed(events: Sequence[Event]) -> list[FileChanged]:
    """The run's changed files, one per change: where the session file told a call's change
    exactly, that ``file_changed`` takes the place of the one derived from the stream."""
    exact = {
        e.call_id: e
        for e in events
        if isinstance(e, FileChanged) and e.origin == "session_file" and e.call_id is not None
    }
    placed: set[str] = set()
    changes = []
    for event in events:
        if not isinstance(event, FileChanged):
            continue
        call = event.call_id
        if call is None or call not in exact:
            changes.append(event)
        elif call not in placed:  # the call's first change, derived or exact
            placed.add(call)
            changes.append(exact[call])
    return changes


class _Tail:
    """One file: where the last look stopped, and a line cut short there."""

    __slots__ = ("offset", "partial")

    def __init__(self) -> None:
        self.offset = 0
        self.partial = b""


class SessionFollower:
    """What the session file of a run holds that its stdout does not, as it is written.

    Args:
        home: the Gemini home (the folder holding ``.gemini``).
        cwd: the project root the CLI runs in.
        session_id: the run's session id, once the stream has announced it.
        started: when the run started (a POSIX time): older messages are history.
    """

    def __init__(
        self, home: str, cwd: str, session_id: Callable[[], str | None], started: float
    ) -> None:
        self._home = GeminiHome(home)
        self._cwd = cwd
        self._session_id = session_id
        self._started = started - 1.0  # file timestamps are milliseconds, clocks differ a bit
        self._tails: dict[str, _Tail] = {}
        self._thoughts: dict[str, int] = {}
        self._changed: set[str] = set()
        self._next_search = 0.0
        self.context: tuple[str, int] | None = None
        """(model, prompt tokens) of the last model response recorded."""

    def poll(self) -> list[Event]:
        """Events for what was appended to the session file since the last poll."""
        session_id = self._session_id()
        if session_id is None:
            return []
        events: list[Event] = []
        for path in self._files(session_id):
            for line in self._new_lines(path):
                events.extend(self._line(line, session_id))
        return events

    def _files(self, session_id: str) -> list[str]:
        # Looking for the files costs more than reading them: once found, look again
        # only now and then (a resume in a new minute adds a file).
        now = time.monotonic()
        if self._tails and now < self._next_search:
            return list(self._tails)
        self._next_search = now + _SEARCH_EVERY
        short = session_id[:8]
        found: list[str] = []
        for project in self._home.project_folders(self._cwd):
            try:
                entries = list(os.scandir(project.chats_dir))
            except OSError:
                continue
            found.extend(e.path for e in entries if short_id_of(e.name) == short)
        return sorted(found)

    def _new_lines(self, path: str) -> list[bytes]:
        tail = self._tails.setdefault(path, _Tail())
        try:
            with open(path, "rb") as file:
                file.seek(tail.offset)
                data = file.read()
        except OSError:
            return []
        if not data:
            return []
        tail.offset += len(data)
        *lines, tail.partial = (tail.partial + data).split(b"\n")
        return lines

    def _line(self, line: bytes, session_id: str) -> list[Event]:
        if not line.startswith(_MESSAGE_START):
            return []  # headers, $set and $rewindTo records: nothing live to tell
        repair = None
        try:
            message = _decode(line)
        except msgspec.DecodeError:
            fixed = decode_repaired(_decode, line)  # half an emoji, as Node writes it
            if fixed is None:
                return []  # the file is read as it is written; the runner's stream stands
            message, repair = fixed
        if message.type != "gemini" or not self._recent(message.timestamp):
            return []
        if message.tokens and isinstance(message.model, str):
            self.context = (message.model, message.tokens.input)
        done = self._thoughts.get(message.id, 0)
        thoughts = [
            ThoughtDelta(
                agent="gemini",
                session_id=session_id,
                text=thought_text(thought.subject, thought.description),
                origin="session_file",
            )
            for thought in (message.thoughts or [])[done:]
        ]
        self._thoughts[message.id] = max(done, len(message.thoughts or ()))
        events: list[Event] = []
        # Said only where a thought shows it: the stream says so of the rest of the message.
        if repair is not None and any("\ufffd" in t.text for t in thoughts):
            events.append(notice("gemini", session_id, repair.message))
        events += thoughts
        for call in message.toolCalls or ():
            diff = file_diff_of(call)
            if diff is None or call.status != "success" or call.id in self._changed:
                continue
            self._changed.add(call.id)
            path = diff.filePath if isinstance(diff.filePath, str) else diff.fileName
            events.append(
                FileChanged(
                    agent="gemini",
                    session_id=session_id,
                    path=os.path.join(self._cwd, path),
                    change="created" if diff.isNewFile is True else "modified",
                    call_id=call.id,
                    derived=False,
                    origin="session_file",
                )
            )
        return events

    def _recent(self, timestamp: str) -> bool:
        try:
            return datetime.fromisoformat(timestamp).timestamp() >= self._started
        except ValueError:
            return True
