"""One Claude Code session file: its `JsonlFormat` (what is particular to Claude Code's
records) and `ClaudeConversation`, loaded whole (`load_claude_session`) or summarized (a
`LightRecord` a line: a message's content is decoded only for a prompt, and then only its
text blocks)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from gemwire._normalize.claude_session import ClaudeSessionNormalizer
from gemwire.errors import SessionError
from gemwire.events import Event
from gemwire.protocol._undecodable import UNDECODABLE
from gemwire.sessions._jsonl import (
    JsonlConversation,
    JsonlFormat,
    Response,
    ResponseTokens,
    load_jsonl,
    problem_notices,
    read_jsonl_info,
    stated_cwd,
    stated_session_id,
    stated_timestamp,
)
from gemwire.sessions._summary import SessionInfo
from gemwire.sessions.claude._links import subagent_calls
from gemwire.wire.claude_session import Record, Usage

__all__ = (
    "CLAUDE",
    "ClaudeConversation",
    "LightRecord",
    "load_claude_session",
    "read_claude_info",
)


class _TextBlock(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    type: str
    text: str | UnsetType = UNSET


_decode_content = msgspec.json.Decoder(str | list[_TextBlock]).decode


class _LightMessage(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    role: str
    content: msgspec.Raw
    """Decoded only for a prompt (`_prompt`)."""
    id: str | UnsetType = UNSET
    model: str | UnsetType = UNSET
    usage: Usage | UnsetType = UNSET


class LightRecord(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What listing and usage read of a line: a `Record` without its texts."""

    type: str
    isSidechain: bool = False
    isMeta: bool | UnsetType = UNSET
    cwd: str | UnsetType = UNSET
    sessionId: str | UnsetType = UNSET
    timestamp: str | UnsetType = UNSET
    message: _LightMessage | UnsetType = UNSET


def _prompt(record: LightRecord) -> str | None:
    message = record.message
    if record.type != "user" or isinstance(message, UnsetType) or record.isMeta is True:
        return None
    try:
        content = _decode_content(message.content)
    except UNDECODABLE:  # not a Messages API content: no prompt (loading says what it is)
        return None
    if isinstance(content, str):
        return content
    return next((b.text for b in content if b.type == "text" and isinstance(b.text, str)), None)


def _responses(records: Iterable[LightRecord]) -> Iterator[Response]:
    """A response's last record: each of its records carries the usage so far."""
    last: dict[str, tuple[Any, _LightMessage]] = {}
    for record in records:
        message = record.message
        if record.type == "assistant" and not isinstance(message, UnsetType):
            key = message.id if isinstance(message.id, str) else str(len(last))
            last[key] = (record.timestamp, message)
    for timestamp, message in last.values():
        usage = message.usage
        if not isinstance(usage, Usage):
            continue
        cached = usage.cache_read_input_tokens or 0
        prompt = usage.input_tokens + cached + (usage.cache_creation_input_tokens or 0)
        tokens = ResponseTokens(prompt, usage.output_tokens, cached, prompt + usage.output_tokens)
        yield timestamp, message.model, tokens, 0, 0


CLAUDE: JsonlFormat[Record, LightRecord] = JsonlFormat(
    agent="claude",
    record=Record,
    light=LightRecord,
    normalizer=lambda sid, cwd: ClaudeSessionNormalizer(session_id=sid, cwd=cwd),
    prompt=_prompt,
    said=lambda r: r.type in ("user", "assistant") and not isinstance(r.message, UnsetType),
    session_id=stated_session_id,
    cwd=stated_cwd,
    timestamp=stated_timestamp,
    responses=_responses,
    main=lambda r: not r.isSidechain,
)
"""Claude Code's records (claude-code-acp 0.16.2); a subagent's (``isSidechain``) are not
the session's own."""


class ClaudeConversation(JsonlConversation[Record], frozen=True, kw_only=True):
    """A Claude Code session file: its records in order, and the lines skipped.

    A subagent's own file (``<session>/subagents/agent-<id>.jsonl``) gives the subagent's
    events, under its ``agentId`` as their ``session_id``, each with the ``parent_call_id``
    of the ``Task`` call that ran it (read from its session's file).
    """

    format = CLAUDE

    @property
    def agent_id(self) -> str | None:
        """The subagent this file is of (its records are sidechains), else ``None``."""
        first = self.records[0] if self.records else None
        if first is None or not first.isSidechain or not isinstance(first.agentId, str):
            return None
        return first.agentId

    def events(self, *, cwd: str | None = None) -> Iterator[Event]:
        if self.agent_id is None:
            yield from JsonlConversation.events(self, cwd=cwd)
            return
        call = self._parent_call()
        for event in self.subagent_events(cwd=cwd):
            yield event if call is None else msgspec.structs.replace(event, parent_call_id=call)

    def _parent_call(self) -> str | None:
        """The ``Task`` call that ran this subagent, read from its session's file
        (``<session>.jsonl`` beside ``<session>/subagents/``); ``None`` if none names it."""
        folder = Path(self.path).parent.parent
        try:
            parent = load_jsonl(folder.with_name(folder.name + ".jsonl"), ClaudeConversation)
        except SessionError:
            return None
        name = os.path.basename(self.path)
        calls = subagent_calls(parent.path, parent.records).items()
        return next((call for call, path in calls if os.path.basename(path) == name), None)

    def subagent_events(self, *, cwd: str | None = None) -> Iterator[Event]:
        """The events of a subagent's file, its sidechain records its own."""
        sid = self.agent_id
        normalizer = ClaudeSessionNormalizer(session_id=sid, cwd=cwd or self.cwd, subagent=True)
        yield from normalizer.start()
        yield from problem_notices(self.agent, sid, self.path, self.problems)
        for record in self.records:
            yield from normalizer.feed(record)
        yield from normalizer.finish()


def load_claude_session(path: str | os.PathLike[str]) -> ClaudeConversation:
    """Load a Claude Code session file (`load_jsonl`)."""
    return load_jsonl(path, ClaudeConversation)


def read_claude_info(path: str | os.PathLike[str], *, project: str | None = None) -> SessionInfo:
    """Summarize a Claude Code session file for listing (``project``: else its ``cwd``)."""
    return read_jsonl_info(path, ClaudeConversation, project=project)
