"""The session sources by agent, and which one a file handed in by path belongs to.

A new agent's source is one entry in `_SOURCES`: its `SessionSource`, made from a home.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from gemwire.errors import InvalidOptions, SessionError
from gemwire.sessions._jsonl import JsonlConversation
from gemwire.sessions._reading import NotRead, open_session_file
from gemwire.sessions._source import AGENTS, SessionSource
from gemwire.sessions.claude import ClaudeHome
from gemwire.sessions.codex import CodexHome
from gemwire.sessions.gemini import Conversation, GeminiHome
from gemwire.sessions.opencode import OpenCodeConversation, OpenCodeHome
from gemwire.sessions.qwen import QwenHome
from gemwire.wire.gemini_session import SESSION_FILE_PREFIX

__all__ = ("Home", "Loaded", "load_session", "source", "sources")

_SOURCES: dict[str, Callable[[str | os.PathLike[str] | None], SessionSource]] = {
    "gemini": GeminiHome,
    "claude": ClaudeHome,
    "codex": CodexHome,
    "qwen": QwenHome,
    "opencode": OpenCodeHome,
}
"""Every agent whose sessions gemwire reads (each of `AGENTS`); the first is the default."""

_HEAD = 4096
"""What `SessionSource.recognises` is shown of a file: its first record starts within it."""

Loaded = Conversation | JsonlConversation[Any] | OpenCodeConversation
"""A session loaded: Gemini's, another agent's of JSON lines (its subclass of
`JsonlConversation`: `ClaudeConversation`, ...), or OpenCode's."""

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
    gemwire.errors.InvalidOptions: unknown agent 'aider': one of gemini, claude, codex, qwen, opencode, or all
    """
    make = _SOURCES.get(agent)
    if make is not None:
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
        return [make(home) for make in _SOURCES.values()]
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
    return [make(None) for make in _SOURCES.values()]


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
    # Every registered source loads one of these.
    loaded = chosen.load(path, keep_originals=keep_originals)
    return cast(Loaded, loaded)
