"""Where Qwen Code keeps sessions: ``<runtime>/projects/<project slug>/chats/<sessionId>.jsonl``.

``<runtime>`` is ``QWEN_RUNTIME_DIR``, else ``QWEN_HOME``, else ``~/.qwen`` (Qwen Code's
``Storage.getRuntimeBaseDir``; a leading ``~`` is the user's home, a relative path is taken
from the current directory); the slug is the project folder with every character but ASCII
letters and digits replaced by ``-`` (``sanitizeCwd``). Archived sessions
(``chats/archive``) are not listed. Folders and files are enumerated, then matched: nothing
is built from a session id or from file contents. A path a caller hands in must resolve
inside ``projects``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import msgspec

from gemwire.errors import SessionError, SessionNotFound
from gemwire.sessions._reading import is_dir, session_paths
from gemwire.sessions._source import SessionUsage, Tokens, UsageTally
from gemwire.sessions._summary import SessionInfo
from gemwire.sessions.qwen._conversation import (
    QwenConversation,
    load_qwen_session,
    read_qwen_info,
)
from gemwire.wire.qwen_session import UsageMetadata

__all__ = ("QwenHome", "project_slug", "runtime_dir")

_SUFFIXES = (".jsonl",)
_NOT_SLUG = re.compile(r"[^a-zA-Z0-9]")
_FIRST_KEY = b'{"uuid":'


def project_slug(root: str) -> str:
    """Qwen Code's folder name for a project.

    >>> project_slug("/tmp/my_app/work")
    '-tmp-my-app-work'
    """
    return _NOT_SLUG.sub("-", root)


def _resolve(configured: str) -> Path:
    """A configured folder as Qwen Code resolves it (``Storage.resolvePath``)."""
    if configured == "~" or configured.startswith(("~/", "~\\")):
        return Path.home().joinpath(*[s for s in re.split(r"[/\\]+", configured[2:]) if s])
    return Path(os.path.abspath(configured))


def runtime_dir() -> Path:
    """The folder Qwen Code writes sessions under, found as it finds it (its env vars
    first; tests/unit/sessions/test_qwen_sessions.py shows each)."""
    for name in ("QWEN_RUNTIME_DIR", "QWEN_HOME"):
        configured = os.environ.get(name)
        if configured:
            return _resolve(configured)
    return Path.home() / ".qwen"


class _Tokens(msgspec.Struct, frozen=True, gc=False):
    input: int
    output: int
    cached: int
    total: int


class QwenHome:
    """Qwen Code's sessions; its `SessionSource`.

    Args:
        home: the folder holding ``.qwen``; default `runtime_dir` (``QWEN_RUNTIME_DIR``,
            else ``QWEN_HOME``, else ``~/.qwen``).

    >>> QwenHome("/nonexistent").sessions("/some/project")
    []
    """

    agent: Final = "qwen"

    def __init__(self, home: str | os.PathLike[str] | None = None) -> None:
        self.home = Path(home) / ".qwen" if home is not None else runtime_dir()
        self.projects_dir = self.home / "projects"

    def __repr__(self) -> str:
        return f"QwenHome({str(self.home)!r})"

    def _folders(self) -> list[Path]:
        try:
            entries = sorted(os.scandir(self.projects_dir), key=lambda e: e.name)
        except OSError:
            return []
        return [Path(e.path) for e in entries if is_dir(e)]

    def _list(self, folder: Path) -> list[SessionInfo]:
        infos = []
        for path in session_paths(folder / "chats", _SUFFIXES):
            try:
                infos.append(read_qwen_info(path))
            except SessionError:  # gone since listed, no permission: not listed
                continue
        ordered = sorted(
            (i for i in infos if i.resumable), key=lambda i: (i.start_time or "", i.path)
        )
        return [msgspec.structs.replace(info, index=n) for n, info in enumerate(ordered, 1)]

    def sessions(self, root: str | os.PathLike[str] | None = None) -> list[SessionInfo]:
        """A project's sessions with a prompt, oldest first, numbered from 1."""
        project = os.path.realpath(os.path.abspath(root if root is not None else os.getcwd()))
        folder = self.projects_dir / project_slug(project)
        return self._list(folder) if folder.is_dir() else []

    def all_sessions(self) -> list[SessionInfo]:
        return [info for folder in self._folders() for info in self._list(folder)]

    def find(
        self, ref: str | os.PathLike[str], root: str | os.PathLike[str] | None = None
    ) -> SessionInfo:
        """A session by id, number (as `sessions` numbers them), ``latest`` or path."""
        text = os.fspath(ref).strip()
        if isinstance(ref, os.PathLike) or os.sep in text or text.endswith(_SUFFIXES):
            return self._by_path(text)
        found = self.sessions(root)
        if not found:
            raise SessionNotFound("No Qwen Code sessions found for this project.")
        if text == "latest":
            return found[-1]
        for info in found:
            if info.id == text or (text.isdigit() and info.index == int(text)):
                return info
        raise SessionNotFound(f"no Qwen Code session {text!r} in this project")

    def _by_path(self, text: str) -> SessionInfo:
        try:
            path = Path(os.path.realpath(text))
        except ValueError:
            raise SessionNotFound(f"no session file at {text}") from None
        if not path.is_relative_to(Path(os.path.realpath(self.projects_dir))):
            raise SessionNotFound(f"{text} is not a session file in {self.projects_dir}")
        if not path.is_file():
            raise SessionNotFound(f"no session file at {text}")
        return read_qwen_info(path)

    def recognises(self, head: bytes) -> bool:
        """Whether a file starting with ``head`` is Qwen Code's: its first record starts
        with the ``uuid`` Qwen Code writes first (Claude Code's, with ``type`` or
        ``parentUuid``; Gemini's, with ``sessionId``).

        >>> home = QwenHome("/nonexistent")
        >>> home.recognises(b'{"uuid":"u","parentUuid":null,"sessionId":"s","type":"user"}')
        True
        >>> home.recognises(b'{"type":"user"}\\n'), home.recognises(b"x")
        (False, False)
        """
        return head.lstrip().startswith(_FIRST_KEY)

    def load(
        self, path: str | os.PathLike[str], *, keep_originals: bool = False
    ) -> QwenConversation:
        """`load_qwen_session` (records are kept as decoded: ``keep_originals`` changes
        nothing)."""
        return load_qwen_session(path)

    def files(self, info: SessionInfo) -> list[str]:
        return [info.path]

    def usage(self, project: str | None, tally: UsageTally) -> Iterator[SessionUsage]:
        """Every response's tokens (one ``assistant`` record each); only ``project``'s (its
        folder, or its folder's name) when given."""
        for folder in self._folders():
            if project is not None and project not in (
                folder.name,
                project_slug(os.path.realpath(project)),
            ):
                continue
            for path in session_paths(folder / "chats", _SUFFIXES):
                tally.files += 1
                try:
                    conversation = load_qwen_session(path)
                except SessionError:
                    tally.problems += 1
                    continue
                tally.problems += len(conversation.problems)
                yield SessionUsage(
                    conversation.cwd or folder.name,
                    conversation.session_id or str(path),
                    next(
                        (r.timestamp for r in conversation.records if isinstance(r.timestamp, str)),
                        None,
                    ),
                    _responses(conversation),
                )


def _responses(conversation: QwenConversation) -> Iterator[tuple[Any, Any, Tokens, int, int]]:
    for record in conversation.records:
        usage = record.usageMetadata
        if record.type == "assistant" and isinstance(usage, UsageMetadata):
            tokens = _Tokens(
                usage.promptTokenCount,
                usage.candidatesTokenCount,
                usage.cachedContentTokenCount,
                usage.totalTokenCount,
            )
            yield (
                record.timestamp,
                record.model,
                tokens,
                usage.thoughtsTokenCount,
                usage.toolUsePromptTokenCount,
            )
