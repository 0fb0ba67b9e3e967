"""The session sources by agent, and which one a file handed in by path belongs to.

The one list of the agents whose sessions gemwire reads (`_SOURCES`): a new agent's source
is one entry there, and `AGENTS`, `AGENT_NAMES`, ``--agent``'s choices, `load_session`,
`nested_events`, search, usage and the server's routes take it from here.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from gemwire.errors import InvalidOptions, SessionError
from gemwire.events import Event
from gemwire.sessions._reading import NotRead, open_session_file
from gemwire.sessions._source import Agent, LoadedSession, SessionSource
from gemwire.sessions.antigravity import AntigravityHome
from gemwire.sessions.claude import ClaudeHome
from gemwire.sessions.codex import CodexHome
from gemwire.sessions.gemini import GeminiHome
from gemwire.sessions.opencode import OpenCodeHome
from gemwire.sessions.qwen import QwenHome
from gemwire.wire.gemini_session import SESSION_FILE_PREFIX

__all__ = (
    "AGENTS",
    "AGENT_NAMES",
    "Home",
    "Loaded",
    "load_session",
    "nested_events",
    "source",
    "sources",
)


class _Source(Protocol):
    """A `SessionSource` class: its agent and name, and a source made from a home."""

    @property
    def agent(self) -> Agent: ...
    @property
    def name(self) -> str: ...
    def __call__(self, home: str | os.PathLike[str] | None = None) -> SessionSource: ...


_SOURCES: tuple[_Source, ...] = (
    GeminiHome,
    ClaudeHome,
    CodexHome,
    QwenHome,
    OpenCodeHome,
    AntigravityHome,
)
"""Every agent whose sessions gemwire reads; the first is the default."""

AGENTS: tuple[Agent, ...] = tuple(made.agent for made in _SOURCES)
"""The agents whose sessions gemwire reads (``gemini`` first: the default)."""

AGENT_NAMES: dict[Agent, str] = {made.agent: made.name for made in _SOURCES}
"""Each agent as people name it."""

_HEAD = 4096
"""What `SessionSource.recognises` is shown of a file: its first record starts within it."""

Loaded = LoadedSession
"""A session loaded: Gemini's `Conversation`, another agent's of JSON lines (its subclass of
`JsonlConversation`: `ClaudeConversation`, ...), OpenCode's `OpenCodeConversation`, or a
new agent's."""

Home = SessionSource | list[SessionSource] | str | os.PathLike[str] | None
"""Sources, or the folder holding the agents' own folders (``.gemini``, …); ``None``: each
agent's default, as it finds it."""


def source(agent: str, home: str | os.PathLike[str] | None = None) -> SessionSource:
    """The sessions of ``agent`` under ``home``.

    >>> source("gemini", "/nonexistent")
    GeminiHome('/nonexistent')
    >>> source("aider")
    Traceback (most recent call last):
      ...
    gemwire.errors.InvalidOptions: unknown agent 'aider': one of gemini, claude, codex, qwen, opencode, antigravity, or all
    """
    for make in _SOURCES:
        if make.agent == agent:
            return make(home)
    raise InvalidOptions(f"unknown agent {agent!r}: one of {', '.join(AGENTS)}, or all")


def sources(agent: str, home: Home = None) -> list[SessionSource]:
    """`source` of ``agent``, or every registered source for ``all``; sources handed in as
    ``home`` are used as they are."""
    if isinstance(home, list):
        return home
    if home is not None and not isinstance(home, (str, os.PathLike)):
        return [home]
    if agent == "all":
        return [make(home) for make in _SOURCES]
    return [source(agent, home)]


def _head(path: Path) -> bytes:
    try:
        with open_session_file(path) as file:
            return file.read(_HEAD)
    except (SessionError, NotRead, OSError):
        return b""  # the default source says why, as a Problem or an error


@functools.cache
def _loaders() -> list[SessionSource]:
    """A source of each agent, to load files with (loading a file needs no home)."""
    return [make(None) for make in _SOURCES]


def load_session(path: str | os.PathLike[str], *, keep_originals: bool = False) -> Loaded:
    """Load a session file of any format a registered agent writes, recognised by its start.

    A file named as Gemini names its sessions (``session-…``) is Gemini's; any other is shown
    to each other source (its first 4 KiB), and one none of them recognises is loaded as
    Gemini's, which reports what is wrong with it in ``problems``. ``keep_originals`` also keeps every message exactly as recorded (for
    exports), and every message decoded; without it, a message is kept as its recorded line
    (a third of the memory) and decoded whenever ``messages`` or `Conversation.events` reads
    it.

    Raises `SessionNotFound` if there is no such file, `SessionError` if it cannot be read;
    anything wrong inside the file is reported in ``problems``.
    """
    default, *others = _loaders()
    chosen = default
    file = Path(path)
    # By name first: listing and usage load thousands of Gemini's files, unopened twice.
    if others and not file.name.startswith(SESSION_FILE_PREFIX):
        # A session inside a database is named ``<database>#<session id>`` (OpenCode's).
        head = _head(file)
        if not head and "#" in file.name:
            head = _head(Path(str(file).rpartition("#")[0]))
        chosen = next((s for s in others if s.recognises(head)), default)
    return chosen.load(path, keep_originals=keep_originals)


def nested_events(session: Loaded, *, cwd: str | None = None) -> Iterator[Event]:
    """The events of any agent's loaded ``session``, each subagent's right after the call
    that ran it, carrying its id as ``parent_call_id`` (`SessionSource.nested_events`: for
    an agent that keeps no link, the session's own events)."""
    made = next((s for s in _loaders() if s.agent == session.agent), None)
    if made is None:
        return session.events(cwd=cwd)
    return made.nested_events(session, cwd=cwd)
