"""Where Codex keeps sessions: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``.

``CODEX_HOME`` is Codex's home, else ``~/.codex`` (as Codex's ``find_codex_home`` finds it).
Sessions are kept by the day they started, not by project: a session's project is the
folder its ``session_meta`` records (``cwd``). Archived sessions (``archived_sessions``) are
not listed.
"""

from __future__ import annotations

import os
from pathlib import Path

from gemwire.sessions._jsonl_home import JsonlHome
from gemwire.sessions._reading import folder_entries, is_dir, session_paths
from gemwire.sessions.codex._conversation import CodexConversation

__all__ = ("CodexHome",)


def _subfolders(folder: Path, unread: dict[str, str]) -> list[Path]:
    return [Path(e.path) for e in folder_entries(folder, unread) if is_dir(e)]


class CodexHome(JsonlHome[CodexConversation]):
    """Codex's sessions; its `SessionSource`.

    Args:
        home: the folder holding ``.codex``; default ``CODEX_HOME`` (the ``.codex`` folder
            itself), else ``~/.codex``.

    >>> CodexHome("/nonexistent").sessions("/some/project")
    []

    A file is Codex's when its first record starts with the ``timestamp`` Codex writes
    first, and that record is its ``session_meta``:

    >>> home = CodexHome("/nonexistent")
    >>> home.recognises(b'{"timestamp":"2026-11-25T17:29:29.170Z","type":"session_meta",')
    True
    >>> home.recognises(b'{"timestamp":"2026-11-25","type":"user"}'), home.recognises(b"x")
    (False, False)
    """

    agent = "codex"
    name = "Codex"
    by_folder = False

    def __init__(self, home: str | os.PathLike[str] | None = None) -> None:
        if home is not None:
            codex_home = Path(home) / ".codex"
        else:
            configured = os.environ.get("CODEX_HOME")
            codex_home = Path(configured) if configured else Path.home() / ".codex"
        super().__init__(
            CodexConversation, codex_home, codex_home / "sessions", first_keys=(b'{"timestamp":',)
        )

    def folders(self) -> list[Path]:
        """The day folders (``YYYY/MM/DD``), oldest first."""
        unread = self.unread
        return [
            day
            for year in _subfolders(self.projects_dir, unread)
            for month in _subfolders(year, unread)
            for day in _subfolders(month, unread)
        ]

    def paths(self, folder: Path) -> list[Path]:
        paths = session_paths(folder, (".jsonl",), self.unread)
        return [p for p in paths if p.name.startswith("rollout-")]

    def recognises(self, head: bytes) -> bool:
        first = head.lstrip().split(b"\n", 1)[0]
        return super().recognises(head) and b'"type":"session_meta"' in first
