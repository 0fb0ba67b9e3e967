"""One Claude Code session file: its `JsonlFormat` (what is particular to Claude Code's
records) and `ClaudeConversation`, loaded whole (`load_claude_session`) or summarized."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from gemwire._normalize.claude_session import ClaudeSessionNormalizer
from gemwire.sessions._jsonl import (
    JsonlConversation,
    JsonlFormat,
    Response,
    ResponseTokens,
    load_jsonl,
    read_jsonl_info,
    recorded_cwd,
    recorded_session_id,
    recorded_timestamp,
)
from gemwire.sessions._summary import SessionInfo
from gemwire.wire.claude_session import Message, Record, Usage

__all__ = ("CLAUDE", "ClaudeConversation", "load_claude_session", "read_claude_info")


def _prompt(record: Record) -> str | None:
    message = record.message
    if record.type != "user" or not isinstance(message, Message) or record.isMeta is True:
        return None
    content = message.content
    if isinstance(content, str):
        return content
    return next((b.text for b in content if b.type == "text" and isinstance(b.text, str)), None)


def _responses(records: list[Record]) -> Iterator[Response]:
    """A response's last record: each of its records carries the usage so far."""
    last: dict[str, tuple[Any, Message]] = {}
    for record in records:
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
        tokens = ResponseTokens(prompt, usage.output_tokens, cached, prompt + usage.output_tokens)
        yield timestamp, message.model, tokens, 0, 0


CLAUDE: JsonlFormat[Record] = JsonlFormat(
    agent="claude",
    record=Record,
    normalizer=lambda sid, cwd: ClaudeSessionNormalizer(session_id=sid, cwd=cwd),
    prompt=_prompt,
    said=lambda r: r.type in ("user", "assistant") and isinstance(r.message, Message),
    session_id=recorded_session_id,
    cwd=recorded_cwd,
    timestamp=recorded_timestamp,
    responses=_responses,
    main=lambda r: not r.isSidechain,
)
"""Claude Code's records (claude-code-acp 0.16.2); a subagent's (``isSidechain``) are not
the session's own."""


class ClaudeConversation(JsonlConversation[Record], frozen=True, kw_only=True):
    """A Claude Code session file: its records in order, and the lines skipped."""

    format = CLAUDE


def load_claude_session(path: str | os.PathLike[str]) -> ClaudeConversation:
    """Load a Claude Code session file (`load_jsonl`)."""
    return load_jsonl(path, ClaudeConversation)


def read_claude_info(path: str | os.PathLike[str], *, project: str | None = None) -> SessionInfo:
    """Summarize a Claude Code session file for listing (``project``: else its ``cwd``)."""
    return read_jsonl_info(path, ClaudeConversation, project=project)
