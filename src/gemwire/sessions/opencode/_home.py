"""Where OpenCode keeps sessions: one SQLite database, ``<data>/opencode/opencode.db``.

``<data>`` is ``XDG_DATA_HOME``, else ``~/.local/share``; ``OPENCODE_DB`` names another
database (absolute, or inside ``<data>/opencode``), as OpenCode finds it. A session's
project is the folder it records (``directory``); a subagent's session (``parent_id``) is
listed under the session that started it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import msgspec

from gemwire.errors import SessionError, SessionNotFound
from gemwire.events import Event
from gemwire.sessions._search_index import Stamp, stamp_file
from gemwire.sessions._source import LoadedSession, SessionUsage, UsageTally
from gemwire.sessions._summary import SessionInfo
from gemwire.sessions.opencode._conversation import (
    OpenCodeConversation,
    load_opencode_session,
    nested_opencode_events,
    split_ref,
)
from gemwire.sessions.opencode._database import (
    Unreadable,
    first_prompts,
    iso_time,
    message_counts,
    messages_by_session,
    read_only,
    session_rows,
    session_stamps,
)
from gemwire.wire.opencode_session import SessionRow

__all__ = ("OpenCodeHome", "database_path")

_SQLITE = b"SQLite format 3\x00"


def database_path(data: Path) -> Path:
    """The database OpenCode uses in its data folder ``data`` (``OPENCODE_DB`` first)."""
    configured = os.environ.get("OPENCODE_DB")
    if configured and configured != ":memory:":
        return Path(configured) if os.path.isabs(configured) else data / configured
    return data / "opencode.db"


class OpenCodeHome:
    """OpenCode's sessions; its `SessionSource`.

    Args:
        home: the folder holding ``.local/share/opencode``; default ``XDG_DATA_HOME``, else
            ``~/.local/share`` (and ``OPENCODE_DB``).

    >>> OpenCodeHome("/nonexistent").sessions("/some/project")
    []
    >>> OpenCodeHome("/nonexistent").recognises(b"SQLite format 3\\x00...")
    True
    """

    agent: Final = "opencode"
    name: Final = "OpenCode"

    def __init__(self, home: str | os.PathLike[str] | None = None) -> None:
        if home is not None:
            self.home = Path(home) / ".local" / "share" / "opencode"
            self.database = self.home / "opencode.db"
        else:
            data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
            self.home = Path(data) / "opencode"
            self.database = database_path(self.home)
        self.unread: dict[str, str] = {}
        self._stamps: dict[str, Stamp] = {}
        self._stamped: Stamp | None = None  # the database's and its log's, when read

    def __repr__(self) -> str:
        return f"OpenCodeHome({str(self.database)!r})"

    def _infos(self, project: str | None) -> list[SessionInfo]:
        """Every session (``project``'s only, when given), subagents under their parent;
        each project's numbered oldest first."""
        try:
            with read_only(self.database) as connection:
                where, args = ("WHERE directory = ?", (project,)) if project else ("", ())
                rows = session_rows(connection, where, *args)
                counts = message_counts(connection)
                prompts = first_prompts(connection)
        except FileNotFoundError:
            return []
        except Unreadable as exc:
            self.unread[str(self.database)] = str(exc)
            return []
        children: dict[str, list[SessionInfo]] = {}
        for row in rows:
            if row.parent_id is not None:
                info = self._info(row, counts, prompts)
                children.setdefault(row.parent_id, []).append(info)
        numbers: dict[str, int] = {}
        infos = []
        for row in rows:
            info = self._info(row, counts, prompts)
            if row.parent_id is not None or not info.resumable:
                continue
            numbers[row.directory] = numbers.get(row.directory, 0) + 1
            subagents = children.get(row.id, [])
            infos.append(
                msgspec.structs.replace(info, index=numbers[row.directory], subagents=subagents)
            )
        return infos

    def _info(
        self, row: SessionRow, counts: dict[str, int], prompts: dict[str, str]
    ) -> SessionInfo:
        prompt = prompts.get(row.id)
        return SessionInfo(
            id=row.id,
            path=f"{self.database}#{row.id}",
            project=row.directory,
            format="sqlite",
            kind="main" if row.parent_id is None else "subagent",
            start_time=iso_time(row.time_created),
            last_updated=iso_time(row.time_updated),
            summary=row.title or None,
            first_prompt=prompt,
            messages=counts.get(row.id, 0),
            resumable=prompt is not None,
            parent_id=row.parent_id,
            agent="opencode",
        )

    def sessions(self, root: str | os.PathLike[str] | None = None) -> list[SessionInfo]:
        """A project's sessions with a prompt, oldest first, numbered from 1."""
        project = os.path.realpath(os.path.abspath(root if root is not None else os.getcwd()))
        return self._infos(project)

    def all_sessions(self) -> list[SessionInfo]:
        return self._infos(None)

    def find(
        self, ref: str | os.PathLike[str], root: str | os.PathLike[str] | None = None
    ) -> SessionInfo:
        """A session by id, number (as `sessions` numbers them), ``latest`` or path
        (``<database>#<session id>``)."""
        text = os.fspath(ref).strip()
        if isinstance(ref, os.PathLike) or os.sep in text or "#" in text:
            return self._by_path(text)
        found = self.sessions(root)
        if not found:
            self._check_readable()
            raise SessionNotFound("No OpenCode sessions found for this project.")
        if text == "latest":
            return found[-1]
        for info in found:
            if info.id == text or (text.isdigit() and info.index == int(text)):
                return info
        raise SessionNotFound(f"no OpenCode session {text!r} in this project")

    def _check_readable(self) -> None:
        try:
            with read_only(self.database):
                pass
        except FileNotFoundError:
            return
        except Unreadable as exc:
            raise SessionError(f"{self.database}: {exc}") from exc

    def _by_path(self, text: str) -> SessionInfo:
        database, session_id = split_ref(text)
        if os.path.realpath(database) != os.path.realpath(self.database):
            raise SessionNotFound(f"{text} is not a session in {self.database}")
        every = self._infos(None)
        listed = [*every, *(sub for info in every for sub in info.subagents)]
        if session_id is None and every:
            return every[-1]
        for info in listed:
            if info.id == session_id:
                return info
        self._check_readable()
        raise SessionNotFound(f"no OpenCode session {session_id} in {self.database}")

    def recognises(self, head: bytes) -> bool:
        """Whether a file starting with ``head`` is a SQLite database (OpenCode's, if it has
        OpenCode's tables: loading it says so when not)."""
        return head.startswith(_SQLITE)

    def load(
        self, path: str | os.PathLike[str], *, keep_originals: bool = False
    ) -> OpenCodeConversation:
        """`load_opencode_session` (``keep_originals`` changes nothing)."""
        return load_opencode_session(path)

    def files(self, info: SessionInfo) -> list[str]:
        return [info.path, *(sub.path for sub in info.subagents)]

    def nested_events(self, session: LoadedSession, *, cwd: str | None = None) -> Iterator[Event]:
        """`nested_opencode_events`: each subagent's session after the ``task`` call that
        started it."""
        if isinstance(session, OpenCodeConversation):
            return nested_opencode_events(session, cwd=cwd)
        return session.events(cwd=cwd)

    def stamp(self, path: str) -> Stamp | None:
        """A session's own stamp (`session_stamps`: its rows' times and counts), read for
        every session at once whenever the database or its log changed since."""
        database, session_id = split_ref(path)
        if session_id is None or database != self.database:
            return None
        files = (stamp_file(str(database)), stamp_file(f"{database}-wal"))
        now = tuple(n for stamp in files for n in stamp or (-1,))
        if now != self._stamped:
            try:
                with read_only(self.database) as connection:
                    self._stamps = session_stamps(connection)
            except (FileNotFoundError, Unreadable):
                self._stamps = {}
            self._stamped = now
        return self._stamps.get(session_id)

    def usage(self, project: str | None, tally: UsageTally) -> Iterator[SessionUsage]:
        """Every response's tokens (a subagent's count towards its parent); only
        ``project``'s (its folder) when given."""
        wanted = {project, os.path.realpath(project)} if project is not None else None
        tally.files += 1
        try:
            with read_only(self.database) as connection:
                rows = session_rows(connection)
                messages, skipped = messages_by_session(connection)
        except FileNotFoundError:
            tally.files -= 1
            return
        except Unreadable as exc:
            self.unread[str(self.database)] = str(exc)  # a problem for the report
            return
        tally.problems += skipped
        for row in rows:
            if wanted is not None and row.directory not in wanted:
                continue
            conversation = OpenCodeConversation(
                path=f"{self.database}#{row.id}",
                session_id=row.id,
                cwd=row.directory,
                parent_id=row.parent_id,
                start_time=iso_time(row.time_created),
                records=list(messages.get(row.id, [])),
                problems=[],
            )
            yield SessionUsage(
                row.directory,
                row.parent_id or row.id,
                conversation.start_time,
                conversation.responses(),
            )
