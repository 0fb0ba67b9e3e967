"""One Qwen Code session file: its `JsonlFormat` (what is particular to Qwen Code's records)
and `QwenConversation`, loaded whole (`load_qwen_session`) or summarized (a `LightRecord` a
line: a message's parts are decoded only for a prompt, and then only their texts)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

import msgspec
from msgspec import UNSET, UnsetType

from gemwire._normalize.qwen_session import QwenSessionNormalizer
from gemwire.protocol._undecodable import UNDECODABLE
from gemwire.sessions._jsonl import (
    JsonlConversation,
    JsonlFormat,
    Response,
    ResponseTokens,
    load_jsonl,
    read_jsonl_info,
    stated_cwd,
    stated_session_id,
    stated_timestamp,
)
from gemwire.sessions._summary import SessionInfo
from gemwire.wire.qwen_session import Record, UsageMetadata

__all__ = ("QWEN", "LightRecord", "QwenConversation", "load_qwen_session", "read_qwen_info")


class _TextPart(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    text: str | UnsetType = UNSET


_decode_parts = msgspec.json.Decoder(list[_TextPart]).decode


class _LightContent(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    role: str
    parts: msgspec.Raw = msgspec.Raw(b"[]")
    """Decoded only for a prompt (`_prompt`)."""


class LightRecord(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What listing and usage read of a line: a `Record` without its texts."""

    type: str
    sessionId: str | UnsetType = UNSET
    timestamp: str | UnsetType = UNSET
    provenance: str | UnsetType = UNSET
    cwd: str | UnsetType = UNSET
    model: str | UnsetType = UNSET
    message: _LightContent | UnsetType = UNSET
    usageMetadata: UsageMetadata | UnsetType = UNSET


def _prompt(record: LightRecord) -> str | None:
    message = record.message
    if (
        record.type != "user"
        or isinstance(message, UnsetType)
        or record.provenance not in (UNSET, "real_user")  # Qwen Code's own (notifications, …)
    ):
        return None
    try:
        parts = _decode_parts(message.parts)
    except UNDECODABLE:  # not a Content's parts: no prompt (loading says what they are)
        return None
    return next((p.text for p in parts if isinstance(p.text, str) and p.text.strip()), None)


def _responses(records: Iterable[LightRecord]) -> Iterator[Response]:
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


QWEN: JsonlFormat[Record, LightRecord] = JsonlFormat(
    agent="qwen",
    record=Record,
    light=LightRecord,
    normalizer=lambda sid, cwd: QwenSessionNormalizer(session_id=sid, cwd=cwd),
    prompt=_prompt,
    said=lambda r: r.type in ("user", "assistant") and not isinstance(r.message, UnsetType),
    session_id=stated_session_id,
    cwd=stated_cwd,
    timestamp=stated_timestamp,
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
