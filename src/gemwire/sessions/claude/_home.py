"""Where Claude Code keeps sessions: ``<config>/projects/<project slug>/<sessionId>.jsonl``.

``<config>`` is ``CLAUDE_CONFIG_DIR``, else ``~/.claude``; the slug is the project folder
(absolute, symlinks resolved) with every character but ASCII letters and digits replaced by
``-``, as Claude Code names it. A session's subagents (``Task``) are kept in
``<sessionId>/subagents/`` beside it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from gemwire.events import Event
from gemwire.sessions._jsonl_home import JsonlHome, path_slug
from gemwire.sessions._source import LoadedSession
from gemwire.sessions.claude._conversation import ClaudeConversation
from gemwire.sessions.claude._links import subagent_paths
from gemwire.sessions.claude._subagents import nested_claude_events

__all__ = ("ClaudeHome", "project_slug")

project_slug = path_slug
"""Claude Code's folder name for a project (`path_slug`)."""


class ClaudeHome(JsonlHome[ClaudeConversation]):
    """Claude Code's sessions; its `SessionSource`.

    Args:
        home: the folder holding ``.claude``; default ``CLAUDE_CONFIG_DIR`` (the ``.claude``
            folder itself), else ``~/.claude``.

    >>> ClaudeHome("/nonexistent").sessions("/some/project")
    []

    A file is Claude Code's when its first record starts with the ``type`` or the
    ``parentUuid`` Claude Code writes first (Gemini's, with its ``sessionId``):

    >>> home = ClaudeHome("/nonexistent")
    >>> home.recognises(b'{"type":"queue-operation","sessionId":"s"}\\n')
    True
    >>> home.recognises(b'{"parentUuid":null,"isSidechain":false,"message":{"con')
    True
    >>> home.recognises(b'{"sessionId":"s","kind":"main"}\\n'), home.recognises(b"x")
    (False, False)
    """

    agent = "claude"
    name = "Claude Code"

    def __init__(self, home: str | os.PathLike[str] | None = None) -> None:
        if home is not None:
            config_dir = Path(home) / ".claude"
        else:
            configured = os.environ.get("CLAUDE_CONFIG_DIR")
            config_dir = Path(configured) if configured else Path.home() / ".claude"
        self.config_dir = config_dir
        super().__init__(
            ClaudeConversation,
            config_dir,
            config_dir / "projects",
            first_keys=(b'{"type":', b'{"parentUuid":'),
        )

    def files_at(self, path: str) -> list[str]:
        """The session's file, then its subagents' (``<sessionId>/subagents/``): their
        responses count towards the session (they carry its ``sessionId``)."""
        return [path, *subagent_paths(path)]

    def nested_events(self, session: LoadedSession, *, cwd: str | None = None) -> Iterator[Event]:
        """`nested_claude_events`: each ``Task`` subagent after the call that ran it."""
        if isinstance(session, ClaudeConversation):
            return nested_claude_events(session, cwd=cwd)
        return session.events(cwd=cwd)
