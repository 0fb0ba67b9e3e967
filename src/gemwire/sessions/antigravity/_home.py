"""Where Antigravity keeps conversations: ``$HOME/.gemini/antigravity`` (its app data folder,
as ``gemwire agent antigravity`` gives the harness), ``brain/<id>/.system_generated/logs/
transcript.jsonl`` each, beside ``conversations/<id>.db``.

A conversation's session file is its transcript; its project is the workspace its database
records. Conversations are kept by id, not by project (``by_folder`` false): one folder
each. The harness's other files there (``transcript_full.jsonl``, the ``chunks/`` of both,
the extracted ``bin/``) are not read: ``transcript.jsonl`` holds the same records.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from gemwire.errors import SessionError, SessionNotFound
from gemwire.sessions._jsonl_home import JsonlHome
from gemwire.sessions._reading import folder_entries, is_dir
from gemwire.sessions._source import SessionUsage, UsageTally
from gemwire.sessions._summary import SessionInfo
from gemwire.sessions.antigravity._conversation import (
    AntigravityConversation,
    conversation_of,
    load_antigravity_session,
    read_antigravity_info,
    responses,
)

__all__ = ("AntigravityHome",)

_TRANSCRIPT = Path(".system_generated") / "logs" / "transcript.jsonl"


class AntigravityHome(JsonlHome[AntigravityConversation]):
    """Antigravity's conversations; its `SessionSource`.

    Args:
        home: the folder holding ``.gemini``; default ``$HOME`` (as the adapter's harness
            finds its app data folder).

    >>> AntigravityHome("/nonexistent").sessions("/some/project")
    []
    >>> home = AntigravityHome("/nonexistent")
    >>> home.recognises(b'{"step_index":0,"source":"USER_EXPLICIT","type":"USER_INPUT"}')
    True
    >>> home.recognises(b'{"timestamp":"2026-11-25","type":"user"}')
    False
    """

    agent = "antigravity"
    name = "Antigravity"
    by_folder = False

    def __init__(self, home: str | os.PathLike[str] | None = None) -> None:
        app_data = Path(home if home is not None else Path.home()) / ".gemini" / "antigravity"
        super().__init__(
            AntigravityConversation, app_data, app_data / "brain", first_keys=(b'{"step_index":',)
        )

    def folders(self) -> list[Path]:
        """Each conversation's folder (``brain/<id>``), by id."""
        entries = folder_entries(self.projects_dir, self.unread)
        return [Path(e.path) for e in entries if is_dir(e)]

    def paths(self, folder: Path) -> list[Path]:
        transcript = folder / _TRANSCRIPT
        return [transcript] if transcript.exists() else []

    def _list(self, folder: Path) -> list[SessionInfo]:
        infos = []
        for path in self.paths(folder):
            try:
                infos.append(read_antigravity_info(path))
            except SessionError:  # gone since listed, no permission: not listed
                continue
        return infos

    def _by_path(self, text: str) -> SessionInfo:
        try:
            path = Path(os.path.realpath(text))
        except ValueError:
            raise SessionNotFound(f"no session file at {text}") from None
        inside = path.is_relative_to(Path(os.path.realpath(self.projects_dir)))
        if not inside or conversation_of(path) is None:
            raise SessionNotFound(f"{text} is not a transcript in {self.projects_dir}")
        return read_antigravity_info(path)  # not a regular file: a problem on it

    def load(
        self, path: str | os.PathLike[str], *, keep_originals: bool = False
    ) -> AntigravityConversation:
        """The transcript at ``path`` with its database's workspace and models."""
        return load_antigravity_session(path)

    def usage(self, project: str | None, tally: UsageTally) -> Iterator[SessionUsage]:
        """Every model call's tokens; only ``project``'s (its workspace) when given."""
        wanted = os.path.realpath(project) if project is not None else None
        for folder in self.folders():
            for path in self.paths(folder):
                tally.files += 1
                try:
                    loaded = load_antigravity_session(path)
                except SessionError:
                    tally.problems += 1
                    continue
                if project is not None and loaded.cwd not in (wanted, project):
                    continue
                tally.problems += len(loaded.problems)
                yield SessionUsage(
                    loaded.cwd or "?",
                    loaded.session_id or str(path),
                    loaded.start_time,
                    responses(loaded.ordered(), loaded.models),
                )
