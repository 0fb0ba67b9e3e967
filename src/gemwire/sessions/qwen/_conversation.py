"""One Qwen Code session file: its `JsonlFormat` (what is particular to Qwen Code's records)
and `QwenConversation`, loaded whole (`load_qwen_session`) or summarized."""

from __future__ import annotations

import os
from collections.abc import Iterator

from msgspec import UNSET

from gemwire._normalize.qwen_session import QwenSessionNormalizer
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
from gemwire.wire.qwen_session import Content, Record, UsageMetadata

__all__ = ("QWEN", "QwenConversation", "load_qwen_session", "read_qwen_info")


def _prompt(record: Record) -> str | None:
    message = record.message
    if (
        record.type != "user"
        or not isinstance(message, Content)
        or record.provenance not in (UNSET, "real_user")  # Qwen Code's own (notifications, …)
    ):
        return None
    return next((p.text for p in message.parts if isinstance(p.text, str) and p.text.strip()), None)


def _responses(records: list[Record]) -> Iterator[Response]:
    """One ``assistant`` record a response."""
    for record in records:
        usage = record.usageMetadata
        if record.type == "assistant" and isinstance(usage, UsageMetadata):
            tokens = ResponseTokens(
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


QWEN: JsonlFormat[Record] = JsonlFormat(
    agent="qwen",
    record=Record,
    normalizer=lambda sid, cwd: QwenSessionNormalizer(session_id=sid, cwd=cwd),
    prompt=_prompt,
    said=lambda r: r.type in ("user", "assistant") and isinstance(r.message, Content),
    session_id=recorded_session_id,
    cwd=recorded_cwd,
    timestamp=recorded_timestamp,
    responses=_responses,
)
"""Qwen Code's records (Qwen Code 0.24.4)."""


class QwenConversation(JsonlConversation[Record], frozen=True, kw_only=True):
    """A Qwen Code session file: its records in order, and the lines skipped."""

    format = QWEN


def load_qwen_session(path: str | os.PathLike[str]) -> QwenConversation:
    """Load a Qwen Code session file (`load_jsonl`)."""
    return load_jsonl(path, QwenConversation)


def read_qwen_info(path: str | os.PathLike[str], *, project: str | None = None) -> SessionInfo:
    """Summarize a Qwen Code session file for listing (``project``: else its ``cwd``)."""
    return read_jsonl_info(path, QwenConversation, project=project)
