"""`SessionSource`: what gemwire needs of one agent's saved sessions; one module per agent.

Every agent keeps its sessions its own way (docs/sessions.md); a source hides that behind
the same few questions: where the agent's home is, which sessions it holds, the events of
one, its files, and the tokens of each model response. `gemwire.sessions.gemini` is the
first source; the registry (`gemwire.sessions._registry`) is the one list of them, and
what is said of every agent (`AGENTS`, `AGENT_NAMES`, the CLI's ``--agent`` choices) comes
from it: a new agent is its source and one entry there.

Shared modules (`_reading`, `_summary`, `_index`, this one) never import a source; a source
imports only them and the layers below (`lint-imports` checks both).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TypeAlias

from gemwire.events import Event
from gemwire.protocol.gemini_session import Problem
from gemwire.sessions._summary import SessionInfo

__all__ = (
    "Agent",
    "LoadedSession",
    "SessionSource",
    "SessionUsage",
    "Tokens",
    "UsageTally",
)

Agent: TypeAlias = str
"""An agent whose sessions gemwire reads, by the name its source gives (``gemini``,
``claude``, …: the registry's `AGENTS`)."""


class Tokens(Protocol):
    """The tokens of one model response, as the usage report adds them up."""

    @property
    def input(self) -> int: ...
    @property
    def output(self) -> int: ...
    @property
    def cached(self) -> int: ...
    @property
    def total(self) -> int: ...


class SessionUsage(NamedTuple):
    """The model responses of one session file, for `gemwire.sessions.usage`.

    ``responses`` yields ``(timestamp, model, tokens, thoughts, tool)`` per response, each
    counted once across the home: the timestamp and model as recorded (anything not an ISO
    string or a name is treated as missing), ``thoughts`` and ``tool`` 0 where not recorded.
    """

    project: str
    """The project's root, else the agent's name for its folder."""
    session: str
    """The id of the session it counts towards (a subagent's: its parent's)."""
    start: Any
    """When the session started (ISO), the day of a response without a timestamp."""
    responses: Iterator[tuple[Any, Any, Tokens, int, int]]


class UsageTally:
    """Files looked at and problems met (lines or files skipped) while collecting usage."""

    __slots__ = ("files", "problems")

    def __init__(self) -> None:
        self.files = 0
        self.problems = 0


class LoadedSession(Protocol):
    """A session loaded whole (Gemini's: `Conversation`)."""

    @property
    def agent(self) -> Agent: ...
    @property
    def path(self) -> str: ...
    @property
    def session_id(self) -> str | None: ...
    @property
    def problems(self) -> list[Problem]: ...
    @property
    def summary(self) -> str | None: ...
    @property
    def start_time(self) -> str | None: ...
    @property
    def last_updated(self) -> str | None: ...
    def events(self, *, cwd: str | None = None) -> Iterator[Event]: ...


class SessionSource(Protocol):
    """One agent's saved sessions, under one home."""

    @property
    def agent(self) -> Agent: ...

    @property
    def name(self) -> str:
        """The agent as people name it (``Claude Code``)."""
        ...

    @property
    def home(self) -> Path:
        """The agent's home, found as the agent finds it (its environment variables first)."""
        ...

    @property
    def unread(self) -> dict[str, str]:
        """What of the home could not be read since this source was made, path -> why: the
        folder its sessions are in, a project's folder, OpenCode's database (a session file
        that cannot be read is a `Problem` on it instead). A home that does not exist is not
        in it: the agent has not run."""
        ...

    def sessions(self, root: str | os.PathLike[str] | None = None) -> list[SessionInfo]:
        """One project's sessions (default: the current directory's), in the agent's order."""
        ...

    def all_sessions(self) -> list[SessionInfo]:
        """Every project's sessions."""
        ...

    def find(
        self, ref: str | os.PathLike[str], root: str | os.PathLike[str] | None = None
    ) -> SessionInfo:
        """A session by the agent's own references (an id, ``latest``, …) or by path."""
        ...

    def recognises(self, head: bytes) -> bool:
        """Whether a file starting with ``head`` (its first few KiB) is in this agent's format."""
        ...

    def load(self, path: str | os.PathLike[str], *, keep_originals: bool = False) -> LoadedSession:
        """The session file at ``path``, loaded whole: a `LoadedSession`."""
        ...

    def files(self, info: SessionInfo) -> list[str]:
        """The files a session is kept in: its own, then its subagents'."""
        ...

    def nested_events(self, session: LoadedSession, *, cwd: str | None = None) -> Iterator[Event]:
        """The events of ``session`` (one `load` gave), each subagent's right after the call
        that ran it, carrying that call's id as ``parent_call_id`` (where the agent keeps
        what links them: else the session's own events)."""
        ...

    def stamp(self, path: str) -> tuple[int, ...] | None:
        """What changes whenever the session at ``path`` (one of `files`) changes, for the
        search index: a file's (size, mtime_ns, inode); ``None`` if it is gone."""
        ...

    def usage(self, project: str | None, tally: UsageTally) -> Iterator[SessionUsage]:
        """Every session file's model responses; only ``project``'s (root or folder name)
        when given."""
        ...
