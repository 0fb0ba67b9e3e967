"""Where Claude Code keeps sessions: ``<config>/projects/<project slug>/<sessionId>.jsonl``.

``<config>`` is ``CLAUDE_CONFIG_DIR``, else ``~/.claude``; the slug is the project folder
(absolute, symlinks resolved) with every character but ASCII letters and digits replaced by
``-``, as Claude Code names it. Folders and files are enumerated, then matched: nothing is
built from a session id or from file contents. A path a caller hands in must resolve inside
``projects``.
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
from gemwire.sessions.claude._conversation import (
    ClaudeConversation,
    load_claude_session,
    read_claude_info,
)
from gemwire.wire.claude_session import Message, Usage

__all__ = ("ClaudeHome", "project_slug")

_SUFFIXES = (".jsonl",)
_NOT_SLUG = re.compile(r"[^a-zA-Z0-9]")
_FIRST_KEYS = (b'{"type":', b'{"parentUuid":')


def project_slug(root: str) -> str:
    """Claude Code's folder name for a project.

    >>> project_slug("/tmp/my_app/work")
    '-tmp-my-app-work'
    """
    return _NOT_SLUG.sub("-", root)


class _Tokens(msgspec.Struct, frozen=True, gc=False):
    input: int
    output: int
    cached: int
    total: int


class ClaudeHome:
    """Claude Code's sessions; its `SessionSource`.

    Args:
        home: the folder holding ``.claude``; default ``CLAUDE_CONFIG_DIR`` (the ``.claude``
            folder itself), else ``~/.claude``.

    >>> ClaudeHome("/nonexistent").sessions("/some/project")
    []
    """

    agent: Final = "claude"

    def __init__(self, home: str | os.PathLike[str] | None = None) -> None:
        if home is not None:
            self.config_dir = Path(home) / ".claude"
        else:
            configured = os.environ.get("CLAUDE_CONFIG_DIR")
            self.config_dir = Path(configured) if configured else Path.home() / ".claude"
        self.home = self.config_dir
        self.projects_dir = self.config_dir / "projects"

    def __repr__(self) -> str:
        return f"ClaudeHome({str(self.config_dir)!r})"

    def _folders(self) -> list[Path]:
        try:
            entries = sorted(os.scandir(self.projects_dir), key=lambda e: e.name)
        except OSError:
            return []
        return [Path(e.path) for e in entries if is_dir(e)]

    def _list(self, folder: Path) -> list[SessionInfo]:
        infos = []
        for path in session_paths(folder, _SUFFIXES):
            try:
                infos.append(read_claude_info(path))
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
            raise SessionNotFound("No Claude Code sessions found for this project.")
        if text == "latest":
            return found[-1]
        for info in found:
            if info.id == text or (text.isdigit() and info.index == int(text)):
                return info
        raise SessionNotFound(f"no Claude Code session {text!r} in this project")

    def _by_path(self, text: str) -> SessionInfo:
        try:
            path = Path(os.path.realpath(text))
        except ValueError:
            raise SessionNotFound(f"no session file at {text}") from None
        if not path.is_relative_to(Path(os.path.realpath(self.projects_dir))):
            raise SessionNotFound(f"{text} is not a session file in {self.projects_dir}")
        if not path.is_file():
            raise SessionNotFound(f"no session file at {text}")
        return read_claude_info(path)

    def recognises(self, head: bytes) -> bool:
        """Whether a file starting with ``head`` is Claude Code's: its first record starts
        with the ``type`` or the ``parentUuid`` Claude Code writes first (Gemini's, with its
        ``sessionId``); the line itself may go on past ``head`` (a long prompt).

        >>> home = ClaudeHome("/nonexistent")
        >>> home.recognises(b'{"type":"queue-operation","sessionId":"s"}\\n')
        True
        >>> home.recognises(b'{"parentUuid":null,"isSidechain":false,"message":{"con')
        True
        >>> home.recognises(b'{"sessionId":"s","kind":"main"}\\n'), home.recognises(b"x")
        (False, False)
        """
        return head.lstrip().startswith(_FIRST_KEYS)

    def load(
        self, path: str | os.PathLike[str], *, keep_originals: bool = False
    ) -> ClaudeConversation:
        """`load_claude_session` (records are kept as decoded: ``keep_originals`` changes
        nothing)."""
        return load_claude_session(path)

    def files(self, info: SessionInfo) -> list[str]:
        return [info.path]

    def usage(self, project: str | None, tally: UsageTally) -> Iterator[SessionUsage]:
        """Every response's tokens (a response's last record: each carries the usage so
        far); only ``project``'s (its folder, or its folder's name) when given."""
        for folder in self._folders():
            if project is not None and project not in (
                folder.name,
                project_slug(os.path.realpath(project)),
            ):
                continue
            for path in session_paths(folder, _SUFFIXES):
                tally.files += 1
                try:
                    conversation = load_claude_session(path)
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


def _responses(conversation: ClaudeConversation) -> Iterator[tuple[Any, Any, Tokens, int, int]]:
    last: dict[str, tuple[Any, Message]] = {}
    for record in conversation.records:
        message = record.message
        if record.type == "assistant" and isinstance(message, Message):
            key = message.id if isinstance(message.id, str) else str(len(last))
            last[key] = (record.timestamp, message)
    for timestamp, message in last.values():
        usage = message.usage
        if not isinstance(usage, Usage):
            continue
        cached = usage.cache_read_input_tokens or 0
        prompt = usage.input_tokens + cached + (usage.cache_creation_input_tokens or 0)
        tokens = _Tokens(prompt, usage.output_tokens, cached, prompt + usage.output_tokens)
        yield timestamp, message.model, tokens, 0, 0
