"""`JsonlHome`: an agent's sessions of JSON lines under its home, as a `SessionSource`.

By default the agent keeps a folder per project, named by a slug of the project's path
(Claude Code's and Qwen Code's way); an agent that keeps its sessions otherwise (Codex, by
date) sets ``by_folder`` false and overrides `JsonlHome.folders` and `JsonlHome.paths`: its
sessions are then matched to a project by the folder each records. Folders and files are
enumerated, then matched: nothing is built from a session id or from file contents. A path
a caller hands in must resolve inside the agent's sessions folder.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

import msgspec

from gemwire.errors import SessionError, SessionNotFound
from gemwire.events import Event
from gemwire.sessions._index import ListingIndex, stamp_of
from gemwire.sessions._jsonl import (
    JsonlConversation,
    load_jsonl,
    read_jsonl_info,
    read_jsonl_usage,
)
from gemwire.sessions._reading import folder_entries, is_dir, session_entries, session_paths
from gemwire.sessions._search_index import Stamp, stamp_file
from gemwire.sessions._source import LoadedSession, SessionUsage, UsageTally
from gemwire.sessions._summary import SessionInfo

__all__ = ("JsonlHome", "path_slug")

C = TypeVar("C", bound=JsonlConversation[Any])

_SUFFIXES = (".jsonl",)
_NOT_SLUG = re.compile(r"[^a-zA-Z0-9]")


def path_slug(root: str) -> str:
    """A project's folder name, as Claude Code and Qwen Code make it (``sanitizeCwd``): its
    path with every character but ASCII letters and digits replaced by ``-``.

    >>> path_slug("/tmp/my_app/work")
    '-tmp-my-app-work'
    """
    return _NOT_SLUG.sub("-", root)


class JsonlHome(Generic[C]):
    """One agent's sessions under ``projects_dir``; its `SessionSource`.

    Args:
        kind: the agent's `JsonlConversation`.
        home: the agent's own folder (``.claude``, ...).
        projects_dir: the folder its sessions are under.
        first_keys: how a line of the agent's format starts (`recognises`).
        chats: the sessions' folder inside a project's folder.
        slug: the agent's folder name for a project's path.
    """

    agent: ClassVar[str]
    """The agent, as the registry names it (its format's)."""
    name: ClassVar[str]
    """The agent as people name it."""
    by_folder = True
    """Whether each project has a folder of its own (`folders`); else a session's project
    is the folder it records."""

    def __init__(
        self,
        kind: type[C],
        home: Path,
        projects_dir: Path,
        *,
        first_keys: tuple[bytes, ...],
        chats: str = "",
        slug: Callable[[str], str] = path_slug,
    ) -> None:
        self.kind = kind
        self.home = home
        self.projects_dir = projects_dir
        self._slug = slug
        self._first_keys = first_keys
        self._chats = chats
        self.unread: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.home)!r})"

    def folders(self) -> list[Path]:
        """The folders sessions are listed and counted by (default: one per project)."""
        entries = folder_entries(self.projects_dir, self.unread)
        return [Path(e.path) for e in entries if is_dir(e)]

    def paths(self, folder: Path) -> list[Path]:
        """The session files of one folder `folders` gives."""
        chats = folder / self._chats if self._chats else folder
        return session_paths(chats, _SUFFIXES, self.unread)

    def _list(self, folder: Path) -> list[SessionInfo]:
        """One folder's sessions, each from the listing index while its file is unchanged."""
        listed = str(folder / self._chats if self._chats else folder)
        index = ListingIndex(listed)
        infos = []
        for entry in session_entries(listed, _SUFFIXES, self.unread):
            try:
                stamp = stamp_of(entry.stat())
            except OSError:  # gone since listed, a link that loops: not listed
                continue
            info = index.get(entry.name, stamp)
            if info is None or info.path != entry.path:
                try:
                    info = read_jsonl_info(entry.path, self.kind)
                except SessionError:  # gone since listed, no permission: not listed
                    continue
                index.put(entry.name, stamp, info)
            infos.append(info)
        index.save()
        return infos

    @staticmethod
    def _numbered(infos: list[SessionInfo]) -> list[SessionInfo]:
        ordered = sorted(
            (i for i in infos if i.resumable), key=lambda i: (i.start_time or "", i.path)
        )
        return [msgspec.structs.replace(info, index=n) for n, info in enumerate(ordered, 1)]

    def sessions(self, root: str | os.PathLike[str] | None = None) -> list[SessionInfo]:
        """A project's sessions with a prompt, oldest first, numbered from 1."""
        project = os.path.realpath(os.path.abspath(root if root is not None else os.getcwd()))
        if not self.by_folder:
            every = (i for f in self.folders() for i in self._list(f))
            return self._numbered([i for i in every if i.project == project])
        folder = self.projects_dir / self._slug(project)
        return self._numbered(self._list(folder)) if folder.is_dir() else []

    def all_sessions(self) -> list[SessionInfo]:
        """Every project's sessions, each project's numbered as `sessions` numbers them."""
        projects: dict[object, list[SessionInfo]] = {}
        for folder in self.folders():
            for info in self._list(folder):
                projects.setdefault(folder if self.by_folder else info.project, []).append(info)
        return [info for infos in projects.values() for info in self._numbered(infos)]

    def find(
        self, ref: str | os.PathLike[str], root: str | os.PathLike[str] | None = None
    ) -> SessionInfo:
        """A session by id, number (as `sessions` numbers them), ``latest`` or path."""
        text = os.fspath(ref).strip()
        name = self.name
        if isinstance(ref, os.PathLike) or os.sep in text or text.endswith(_SUFFIXES):
            return self._by_path(text)
        found = self.sessions(root)
        if not found:
            raise SessionNotFound(f"No {name} sessions found for this project.")
        if text == "latest":
            return found[-1]
        for info in found:
            if info.id == text or (text.isdigit() and info.index == int(text)):
                return info
        raise SessionNotFound(f"no {name} session {text!r} in this project")

    def _by_path(self, text: str) -> SessionInfo:
        try:
            path = Path(os.path.realpath(text))
        except ValueError:
            raise SessionNotFound(f"no session file at {text}") from None
        if not path.is_relative_to(Path(os.path.realpath(self.projects_dir))):
            raise SessionNotFound(f"{text} is not a session file in {self.projects_dir}")
        if not path.exists():
            raise SessionNotFound(f"no session file at {text}")
        return read_jsonl_info(path, self.kind)  # not a regular file: a problem on it

    def recognises(self, head: bytes) -> bool:
        """Whether a file starting with ``head`` is in this agent's format: its first line
        starts with the key the agent writes first (the line may go on past ``head``)."""
        return head.lstrip().startswith(self._first_keys)

    def load(self, path: str | os.PathLike[str], *, keep_originals: bool = False) -> C:
        """The session file at ``path`` (records are kept as decoded: ``keep_originals``
        changes nothing)."""
        return load_jsonl(path, self.kind)

    def files(self, info: SessionInfo) -> list[str]:
        return self.files_at(info.path)

    def stamp(self, path: str) -> Stamp | None:
        return stamp_file(path)

    def nested_events(self, session: LoadedSession, *, cwd: str | None = None) -> Iterator[Event]:
        """The session's events (an agent whose subagents are linked overrides this)."""
        return session.events(cwd=cwd)

    def files_at(self, path: str) -> list[str]:
        """The session file at ``path``, then its subagents' where the agent keeps them apart."""
        return [path]

    def _counted(self, folder: Path, project: str | None) -> bool:
        if project is None or not self.by_folder:
            return True
        return folder.name in (project, self._slug(os.path.realpath(project)))

    def usage(self, project: str | None, tally: UsageTally) -> Iterator[SessionUsage]:
        """Every response's tokens; only ``project``'s (its folder, or its folder's name)
        when given."""
        by_record = project is not None and not self.by_folder
        wanted = os.path.realpath(project) if project is not None else None
        for folder in self.folders():
            if not self._counted(folder, project):
                continue
            for path in (f for p in self.paths(folder) for f in self.files_at(str(p))):
                tally.files += 1
                try:
                    counted = read_jsonl_usage(path, self.kind)
                except SessionError:
                    tally.problems += 1
                    continue
                if by_record and counted.cwd not in (wanted, project):
                    continue
                tally.problems += counted.problems
                yield SessionUsage(
                    counted.cwd or (folder.name if self.by_folder else "?"),
                    counted.session_id or str(path),
                    counted.start,
                    iter(counted.responses),
                )
