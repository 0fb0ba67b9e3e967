"""One Codex rollout file: its `JsonlFormat` (what is particular to Codex's records) and
`CodexConversation`, loaded whole (`load_codex_session`) or summarized.

The session's id and folder are its ``session_meta``'s; its prompts, the ``user_message``
events (what the user typed; Codex's own context goes to the model as user messages too);
its messages, those and the ``agent_message`` events. Each model response's tokens are the
difference between consecutive cumulative ``token_count`` totals. A record's payload stays
raw until read (`payload_of`); listing and usage look first at its kind alone
(`payload_type`), and decode only those they need (not an answer's text).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from gemwire._normalize.codex_session import CodexSessionNormalizer, tokens_spent
from gemwire.protocol.codex_session import payload_of, payload_type
from gemwire.sessions._jsonl import (
    JsonlConversation,
    JsonlFormat,
    Response,
    ResponseTokens,
    load_jsonl,
    read_jsonl_info,
)
from gemwire.sessions._summary import SessionInfo
from gemwire.wire.codex_session import (
    EventMsg,
    Record,
    SessionMeta,
    TokenUsage,
    TokenUsageInfo,
    TurnContext,
)

__all__ = ("CODEX", "CodexConversation", "load_codex_session", "read_codex_info")


def _meta(record: Record) -> SessionMeta | None:
    if record.type != "session_meta":
        return None
    meta = payload_of(record)
    return meta if isinstance(meta, SessionMeta) else None


def _session_id(record: Record) -> str | None:
    meta = _meta(record)
    return meta.id if meta is not None else None


def _cwd(record: Record) -> str | None:
    meta = _meta(record)
    return meta.cwd if meta is not None and isinstance(meta.cwd, str) else None


def _said(record: Record) -> bool:
    """A ``user_message`` or ``agent_message`` event."""
    return record.type == "event_msg" and payload_type(record) in ("user_message", "agent_message")


def _prompt(record: Record) -> str | None:
    if record.type != "event_msg" or payload_type(record) != "user_message":
        return None
    event = payload_of(record)
    if not isinstance(event, EventMsg) or not isinstance(event.message, str):
        return None
    return event.message


def _responses(records: Iterable[Record]) -> Iterator[Response]:
    model: str | None = None
    counted = TokenUsage()
    for record in records:
        if record.type == "turn_context":
            context = payload_of(record)
            if isinstance(context, TurnContext) and isinstance(context.model, str):
                model = context.model
            continue
        # Only token counts are decoded: the rest of a long session is not read twice.
        if record.type != "event_msg" or payload_type(record) != "token_count":
            continue
        event = payload_of(record)
        if not isinstance(event, EventMsg) or not isinstance(event.info, TokenUsageInfo):
            continue
        spent = tokens_spent(counted, event.info.total_token_usage)
        counted = event.info.total_token_usage
        if spent is None:
            continue
        reasoning = spent.reasoning_output_tokens
        tokens = ResponseTokens(
            spent.input_tokens,
            spent.output_tokens - reasoning,
            spent.cached_input_tokens,
            spent.total_tokens,
        )
        yield record.timestamp, model, tokens, reasoning, 0


CODEX: JsonlFormat[Record, Record] = JsonlFormat(
    agent="codex",
    record=Record,
    light=Record,  # its payload is decoded when read
    normalizer=lambda sid, cwd: CodexSessionNormalizer(session_id=sid, cwd=cwd),
    prompt=_prompt,
    said=_said,
    session_id=_session_id,
    cwd=_cwd,
    timestamp=lambda r: r.timestamp if isinstance(r.timestamp, str) else None,
    responses=_responses,
)
"""Codex's rollout records (codex-acp 0.16.0, Codex 0.137.0)."""


class CodexConversation(JsonlConversation[Record], frozen=True, kw_only=True):
    """A Codex rollout file: its records in order, and the lines skipped."""

    format = CODEX


def load_codex_session(path: str | os.PathLike[str]) -> CodexConversation:
    """Load a Codex rollout file (`load_jsonl`)."""
    return load_jsonl(path, CodexConversation)


def read_codex_info(path: str | os.PathLike[str], *, project: str | None = None) -> SessionInfo:
    """Summarize a Codex rollout file for listing (``project``: else its ``cwd``)."""
    return read_jsonl_info(path, CodexConversation, project=project)
