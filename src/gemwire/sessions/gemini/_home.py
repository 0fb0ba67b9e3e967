"""Where Gemini CLI keeps sessions, and which of them ``gemini --resume`` would pick.

A Gemini home is the folder holding ``.gemini`` (``GEMINI_CLI_HOME``, else the user's home).
Sessions live in ``.gemini/tmp/<project>/chats/``, where ``<project>`` is

- a **slug** (Gemini CLI 0.29 and newer): ``projects.json`` maps the project root to it and
  ``tmp/<slug>/.project_root`` records the owner (docs/gemini-cli.md#session-files);
- the **sha256** hex of the project root (older CLIs). 0.61.0 copies such a folder into the
  slug folder only while the slug folder is empty, so both can exist side by side.

How a root is spelled differs by OS (`RootSpelling`): on Windows the registry holds it
lowercased, while the hash is of the root as the CLI's working directory spelled it.

Subagent transcripts live in ``chats/<parentSessionId>/<agentSessionId>.json[l]``.

Nothing here builds a path from a session id or from file contents: folders and files are
enumerated, then matched. A path a caller hands in must resolve inside the home's ``tmp``.
"""

from __future__ import annotations

import hashlib
import ntpath
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Final, Literal

import msgspec

from gemwire.errors import SessionError, SessionNotFound
from gemwire.events import Event
from gemwire.protocol._undecodable import UNDECODABLE
from gemwire.sessions._index import ListingIndex, stamp_of
from gemwire.sessions._reading import folder_entries, is_dir, read_small_file, session_entries
from gemwire.sessions._search_index import Stamp, stamp_file
from gemwire.sessions._source import LoadedSession, SessionUsage, UsageTally
from gemwire.sessions._summary import SessionInfo, short_id_of
from gemwire.sessions.gemini._conversation import Conversation, load_session, read_session_info
from gemwire.sessions.gemini._projects import Project
from gemwire.sessions.gemini._replay import SESSION_SUFFIXES
from gemwire.sessions.gemini._subagents import nested_events
from gemwire.sessions.gemini._usage import session_usage
from gemwire.wire.gemini_session import SESSION_FILE_PREFIX, ProjectRegistryData

__all__ = ("GeminiHome", "Project", "RootSpelling", "project_hash", "registry_key")

_SLUG = re.compile(r"[a-z0-9-]+")
_HASH = re.compile(r"[0-9a-f]{64}")
_PROJECT_ROOT_FILE = ".project_root"
_SMALL_FILE = 1 << 16  # a .project_root: one path
_REGISTRY_FILE = 16 << 20  # projects.json: one line per project
_registry_decoder = msgspec.json.Decoder(ProjectRegistryData)


def project_hash(root: str) -> str:
    """The sha256 hex of a project root: the pre-0.29 folder name and every ``projectHash``."""
    return hashlib.sha256(root.encode()).hexdigest()


def registry_key(root: str, platform: str = sys.platform) -> str:
    r"""``root`` as Gemini CLI writes it in ``projects.json`` and ``.project_root`` on
    ``platform`` (0.61.0's ``ProjectRegistry.normalizePath``: ``path.resolve``, then on
    Windows alone ``toLowerCase``, drive letter and all, backslashes kept). The legacy hash
    folder is not keyed so: it is the sha256 of the root as the CLI saw it (`project_hash`).

    >>> registry_key(r"C:\Users\Me\My Proj", "win32"), registry_key("D:/Work/", "win32")
    ('c:\\users\\me\\my proj', 'd:\\work')
    >>> registry_key("/Users/Me/Proj", "darwin")
    '/Users/Me/Proj'
    """
    if platform == "win32":
        return ntpath.normpath(root).lower()  # path.win32.resolve: backslashes, no trailing one
    return root


class RootSpelling:
    r"""How Gemini CLI spells a project root on ``platform``: the registry's key, and the
    names the legacy hash folder may have.

    The hash is of ``path.resolve(process.cwd())`` (``Storage.getFilePathHash``), spelled
    as the shell spelled the folder: on Windows, where folder names ignore case, that need
    not be the registry's lowercased key nor the folder's own case. So on Windows the hash
    folder may be named after the folder's case on disk (``canonical``: ``realpath``,
    there) or the root as given, each with its drive letter either way (a shell may
    report ``c:``); anywhere else after the root itself.

    >>> cased = {r"c:\users\ana\proj": r"C:\Users\Ana\Proj"}
    >>> windows = RootSpelling("win32", canonical=lambda path: cased.get(path, path))
    >>> windows.spellings(r"c:\users\ana\proj")
    ['c:\\users\\ana\\proj', 'C:\\users\\ana\\proj', 'C:\\Users\\Ana\\Proj', 'c:\\Users\\Ana\\Proj']
    >>> RootSpelling("linux").spellings("/home/ana/proj")
    ['/home/ana/proj']
    """

    def __init__(
        self,
        platform: str = sys.platform,
        *,
        canonical: Callable[[str], str] = os.path.realpath,
    ) -> None:
        self.platform = platform
        self._canonical = canonical

    def key(self, root: str) -> str:
        """`registry_key` on this platform."""
        return registry_key(root, self.platform)

    def resolve(self, path: str | os.PathLike[str]) -> str:
        """The project root of a working folder: absolute, links resolved (``process.cwd()``)."""
        if self.platform == "win32":
            return self._canonical(ntpath.abspath(os.fspath(path)))
        return self._canonical(os.path.abspath(path))

    def spellings(self, root: str) -> list[str]:
        """Every spelling of ``root`` a legacy hash folder may be named after, in order."""
        if self.platform != "win32":
            return [root]
        given = ntpath.normpath(root)
        found: list[str] = []
        for spelled in (given, self._canonical(given)):
            drive_swapped = spelled[0].swapcase() + spelled[1:] if spelled[1:2] == ":" else spelled
            for each in (spelled, drive_swapped):
                if each not in found:
                    found.append(each)
        return found

    def hash_names(self, root: str) -> list[str]:
        """`project_hash` of every `spellings` of ``root``."""
        return [project_hash(spelled) for spelled in self.spellings(root)]

    def is_root(self, path: str | os.PathLike[str], root: str) -> bool:
        r"""Whether the folder ``path`` is the project ``root`` (as a registry holds it).

        >>> RootSpelling("win32", canonical=str).is_root(r"C:\Ana\Proj", r"c:\ana\proj")
        True
        >>> RootSpelling("linux", canonical=str).is_root("/Ana/Proj", "/ana/proj")
        False
        """
        return self.key(self.resolve(path)) == self.key(root)


def _read_text(path: Path) -> str | None:
    data = read_small_file(path, _SMALL_FILE)
    try:
        return None if data is None else data.decode().strip()
    except UnicodeDecodeError:
        return None


def _time(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        return None


def _start_key(info: SessionInfo) -> float:
    """``new Date(startTime)`` as Gemini sorts by it, with its fallbacks for a missing time."""
    if info.start_time is not None:
        return _time(info.start_time) or 0.0
    if info.format == "jsonl":
        return time.time()  # loadConversationRecord fills in "now"
    updated = _time(info.last_updated)
    if updated is not None:
        return updated
    try:
        return os.stat(info.path).st_mtime
    except OSError:
        return time.time()


class GeminiHome:
    """A Gemini home: its projects, their session files, and ``--resume`` lookups; Gemini's
    `SessionSource`.

    Args:
        home: the folder holding ``.gemini``; default ``GEMINI_CLI_HOME``, else ``~``.
        spelling: how Gemini CLI spells project roots; default: as on this OS.

    >>> home = GeminiHome("/nonexistent")
    >>> home.sessions("/some/project")
    []
    """

    agent: Final = "gemini"
    name: Final = "Gemini"

    def __init__(
        self, home: str | os.PathLike[str] | None = None, *, spelling: RootSpelling | None = None
    ) -> None:
        chosen = home if home is not None else os.environ.get("GEMINI_CLI_HOME") or Path.home()
        self.spelling = spelling or RootSpelling()
        self.home = Path(chosen)
        self.gemini_dir = self.home / ".gemini"
        self.tmp_dir = self.gemini_dir / "tmp"
        self.unread: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"GeminiHome({str(self.home)!r})"

    def registry(self) -> dict[str, str]:
        """``projects.json``: project root -> slug (empty if missing or invalid, as Gemini does)."""
        raw = read_small_file(self.gemini_dir / "projects.json", _REGISTRY_FILE)
        try:
            data = _registry_decoder.decode(raw or b"")
        except UNDECODABLE:
            return {}
        if not all(_SLUG.fullmatch(slug) for slug in data.projects.values()):
            return {}  # Gemini resets a registry that fails its schema
        return data.projects

    def _owner(self, slug: str) -> str | None:
        return _read_text(self.tmp_dir / slug / _PROJECT_ROOT_FILE)

    def _owns(self, slug: str, root: str) -> bool:
        for base in (self.tmp_dir, self.gemini_dir / "history"):
            owner = _read_text(base / slug / _PROJECT_ROOT_FILE)
            if owner is not None and self.spelling.key(owner) != self.spelling.key(root):
                return False
        return True

    def _folders(self) -> list[str]:
        return [e.name for e in folder_entries(self.tmp_dir, self.unread) if is_dir(e)]

    def projects(self) -> list[Project]:
        """Every project folder that has a ``chats`` folder, with its root when known."""
        registry = self.registry()
        by_slug = {slug: root for root, slug in registry.items()}
        by_hash = {name: root for root in registry for name in self.spelling.hash_names(root)}
        found = []
        for name in self._folders():
            if not os.path.isdir(self.tmp_dir / name / "chats"):
                continue
            if _HASH.fullmatch(name):
                found.append(self._project(name, by_hash.get(name), "hash"))
            else:
                found.append(self._project(name, self._owner(name) or by_slug.get(name), "slug"))
        return found

    def _project(self, name: str, root: str | None, layout: Literal["slug", "hash"]) -> Project:
        return Project(id=name, path=str(self.tmp_dir / name), root=root, layout=layout)

    def project_folders(self, root: str | os.PathLike[str] | None = None) -> list[Project]:
        """The folders of one project (default: the current directory): slug first, then hash.

        Only folders that exist are returned; a project Gemini never ran in has none.
        """
        project = self.spelling.resolve(root if root is not None else os.getcwd())
        folders = []
        slug = self._slug(project)
        if slug is not None and (self.tmp_dir / slug).is_dir():
            folders.append(self._project(slug, project, "slug"))
        # On Windows each spelling the old CLI ran under made a folder of its own.
        folders.extend(
            self._project(digest, project, "hash")
            for digest in self.spelling.hash_names(project)
            if (self.tmp_dir / digest).is_dir()
        )
        return folders

    def _slug(self, root: str) -> str | None:
        """The slug Gemini would use for ``root`` now (``ProjectRegistry.getShortId``, read-only)."""
        key = self.spelling.key(root)
        slug = self.registry().get(key)
        if slug is not None and self._owns(slug, root):
            return slug
        for name in self._folders():
            owner = self._owner(name)
            if _SLUG.fullmatch(name) and owner is not None and self.spelling.key(owner) == key:
                return name
        return None

    def session_files(self, root: str | os.PathLike[str] | None = None) -> list[SessionInfo]:
        """Every main session file of a project, resumable or not, subagents attached.

        All of the project's folders (both layouts), each in file-name order. This is what
        Gemini's retention cleanup looks at; ``resumable`` is its verdict on each file.
        """
        return [info for p in self.project_folders(root) for info in self._chats(p)]

    def _chats(self, project: Project, short_id: str | None = None) -> list[SessionInfo]:
        """The project's main session files, summarized; only those whose name carries
        ``short_id`` when it is given (the name is checked before the file is read).

        A listing (no ``short_id``) takes what it can from the listing index; the few files of
        one session are read, never taken from it: files are deleted by what they say
        (`gemwire.sessions.remove_resume_stubs`).
        """
        chats = project.chats_dir
        entries = folder_entries(chats, self.unread)
        subfolders = {e.name: e.path for e in entries if is_dir(e)}
        index = ListingIndex(chats) if short_id is None else None
        infos = []
        for entry in entries:
            if not (
                entry.name.startswith(SESSION_FILE_PREFIX)
                and (short_id is None or short_id_of(entry.name) == short_id)
                and entry.name.endswith(SESSION_SUFFIXES)
                and not is_dir(entry)
            ):
                continue
            info = _summary(index, entry, entry.name, project.root)
            if info is None:
                continue
            folder = subfolders.get(info.id) if info.id else None
            if folder is not None:
                subagents = []
                for sub_entry in session_entries(folder, SESSION_SUFFIXES):
                    name = f"{info.id}/{sub_entry.name}"
                    sub = _summary(index, sub_entry, name, project.root, info.id)
                    if sub is not None:
                        subagents.append(sub)
                info = msgspec.structs.replace(info, subagents=subagents)
            infos.append(info)
        if index is not None:
            index.save()
        return infos

    def sessions(self, root: str | os.PathLike[str] | None = None) -> list[SessionInfo]:
        """The sessions ``gemini --resume`` offers in a project, numbered as it numbers them.

        Resumable main sessions of the folder the current CLI uses (the slug folder; the hash
        folder for projects only older CLIs ran in), one per session id (the file updated
        last), sorted by start time; ``index`` is what ``gemini --resume <n>`` takes.
        """
        folders = self.project_folders(root)
        return _numbered(self._chats(folders[0])) if folders else []

    def all_sessions(self) -> list[SessionInfo]:
        """`sessions` of every project folder in the home, project by project."""
        return [info for project in self.projects() for info in _numbered(self._chats(project))]

    def find(
        self, ref: str | os.PathLike[str], root: str | os.PathLike[str] | None = None
    ) -> SessionInfo:
        """The session ``gemini --resume <ref>`` would resume, or a session file by path.

        ``ref`` is a full session id, a 1-based index (as `sessions` numbers them), ``latest``,
        or the path of a session file inside this home (anything else is refused).
        Raises `SessionNotFound` with Gemini's own wording.
        """
        text = os.fspath(ref).strip()
        if isinstance(ref, os.PathLike) or os.sep in text or text.endswith(SESSION_SUFFIXES):
            return self._by_path(text)
        sessions = self.sessions(root)
        if not sessions:
            raise SessionNotFound("No previous sessions found for this project.")
        if text == "latest":
            return sessions[-1]
        for info in sessions:
            if info.id == text:
                return info
        if (
            text.isascii()
            and text.isdigit()
            and str(int(text)) == text
            and 0 < int(text) <= len(sessions)
        ):
            return sessions[int(text) - 1]
        raise SessionNotFound(
            f'Invalid session identifier "{text}": not a session id, an index from 1 to '
            f"{len(sessions)}, or latest (prefixes do not count)."
        )

    def _by_path(self, text: str) -> SessionInfo:
        try:
            path = Path(os.path.realpath(text))
        except ValueError:  # a NUL: no file has that name
            raise SessionNotFound(f"no session file at {text}") from None
        tmp = Path(os.path.realpath(self.tmp_dir))
        if not path.is_relative_to(tmp):
            raise SessionNotFound(f"{text} is not a session file in {self.tmp_dir}")
        if not (path.exists() and not path.is_dir() and path.name.endswith(SESSION_SUFFIXES)):
            raise SessionNotFound(f"no session file at {text}")
        project = self._project_of(path.relative_to(tmp).parts[0])
        chats = tmp / path.relative_to(tmp).parts[0] / "chats"
        parent = path.parent.name if path.parent.parent == chats else None
        return read_session_info(path, project=project, parent_id=parent)

    def _project_of(self, folder: str) -> str | None:
        return next((p.root for p in self.projects() if p.id == folder), None)

    def files_of(
        self, session_id: str, root: str | os.PathLike[str] | None = None
    ) -> list[SessionInfo]:
        """Every file of a project whose name carries the session's 8-character short id.

        ``session_id`` is a full id or a short id. These are the files Gemini's retention
        cleanup deletes together when any one of them is not resumable (§5.5): a resumed
        session's stub file takes the original with it.
        """
        short = session_id[:8]
        return [info for p in self.project_folders(root) for info in self._chats(p, short)]

    # The rest of `SessionSource`: what every agent's sessions answer.

    def recognises(self, head: bytes) -> bool:
        """Whether a file starting with ``head`` is a Gemini session: its first record, a line
        (``.jsonl``) or a pretty-printed document (``.json``), starts with ``sessionId``.

        >>> home = GeminiHome("/nonexistent")
        >>> home.recognises(b'{"sessionId":"1"}'), home.recognises(b'{\\n  "sessionId": "1"')
        (True, True)
        >>> home.recognises(b'{"parentUuid":null,"sessionId":"1"}')
        False
        """
        return head.lstrip().removeprefix(b"{").lstrip().startswith(b'"sessionId"')

    def load(self, path: str | os.PathLike[str], *, keep_originals: bool = False) -> Conversation:
        """`load_session`."""
        return load_session(path, keep_originals=keep_originals)

    def files(self, info: SessionInfo) -> list[str]:
        """The session's file, then its subagents' files."""
        return [info.path, *(sub.path for sub in info.subagents)]

    def stamp(self, path: str) -> Stamp | None:
        return stamp_file(path)

    def nested_events(self, session: LoadedSession, *, cwd: str | None = None) -> Iterator[Event]:
        """`nested_events`: each subagent after the ``invoke_agent`` call that ran it."""
        if isinstance(session, Conversation):
            return nested_events(session, cwd=cwd)
        return session.events(cwd=cwd)

    def usage(self, project: str | None, tally: UsageTally) -> Iterator[SessionUsage]:
        """Every model response saved in the home (in ``project`` only, when given: its root,
        or its folder name under ``tmp``)."""
        projects = [p for p in self.projects() if project is None or self._names(p, project)]
        return session_usage(projects, tally, self.unread)

    def _names(self, project: Project, wanted: str) -> bool:
        """Whether ``wanted`` names ``project``: its folder name, or its root."""
        return wanted == project.id or (
            project.root is not None and self.spelling.is_root(wanted, project.root)
        )


def _summary(
    index: ListingIndex | None,
    entry: os.DirEntry[str],
    name: str,
    project: str | None,
    parent_id: str | None = None,
) -> SessionInfo | None:
    """The file ``name`` (as the index knows it) summarized, from the index while the file
    is unchanged; ``None`` if it cannot be read at all (gone since the folder was listed, no
    permission): one such file does not stop the listing, as in Gemini."""
    if index is None:
        return _read(entry, project, parent_id)
    try:
        stamp = stamp_of(entry.stat())
    except OSError:
        return None
    info = index.get(name, stamp)
    if info is None or (info.path, info.project, info.parent_id) != (
        entry.path,
        project,
        parent_id,
    ):
        info = _read(entry, project, parent_id)
        if info is not None:
            index.put(name, stamp, info)
    return info


def _read(
    entry: os.DirEntry[str], project: str | None, parent_id: str | None
) -> SessionInfo | None:
    try:
        return read_session_info(entry.path, project=project, parent_id=parent_id)
    except SessionError:
        return None


def _numbered(files: list[SessionInfo]) -> list[SessionInfo]:
    """getSessionFiles: resumable, unique by id (last updated wins), by start time, 1-based."""
    unique: dict[str, SessionInfo] = {}
    for info in files:
        if not info.resumable or info.id is None:
            continue
        kept = unique.get(info.id)
        if kept is None or (_time(info.last_updated) or 0) > (_time(kept.last_updated) or 0):
            unique[info.id] = info
    ordered = sorted(unique.values(), key=_start_key)
    return [msgspec.structs.replace(info, index=n) for n, info in enumerate(ordered, start=1)]
