"""One Codex rollout file: its `JsonlFormat` (what is particular to Codex's records) and
`CodexConversation`, loaded whole (`load_codex_session`) or summarized.

The session's id and folder are its ``session_meta``'s; its prompts, the ``user_message``
events (what the user typed; Codex's own context goes to the model as user messages too), or
Codex 0.166's ``item_completed`` ``UserMessage`` items; its messages, those and the
``agent_message`` events (0.166: ``AgentMessage`` items). Each model response's tokens are
the difference between consecutive cumulative totals (``token_count``'s, 0.166's
``token_usage_record``'s). A record's payload stays raw until read (`payload_of`); listing
and usage look first at its kind alone (`payload_type`, `item_type`), and decode only those
they need (not an answer's text).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from gemwire._normalize.codex_session import CodexSessionNormalizer, tokens_spent
from gemwire.protocol.codex_session import item_type, payload_of, payload_type
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
    ThreadItem,
    TokenUsage,
    TokenUsageInfo,
    TokenUsageRecord,
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
    """A ``user_message`` or ``agent_message`` event, or Codex 0.166's item of one."""
    if record.type != "event_msg":
        return False
    kind = payload_type(record)
    if kind == "item_completed":
        return item_type(record) in ("UserMessage", "AgentMessage")
    return kind in ("user_message", "agent_message")


def _prompt(record: Record) -> str | None:
    if record.type != "event_msg":
        return None
    kind = payload_type(record)
    if kind not in ("user_message", "item_completed"):
        return None
    if kind == "item_completed" and item_type(record) != "UserMessage":
        return None
    event = payload_of(record)
    if not isinstance(event, EventMsg):
        return None
    if isinstance(event.item, ThreadItem) and isinstance(event.item.content, list):
        return "\n".join(c.text for c in event.item.content if isinstance(c.text, str))
    return event.message if isinstance(event.message, str) else None


def _total(record: Record) -> TokenUsage | None:
    """A usage record's cumulative total: ``token_count``'s, ``token_usage_record``'s
    ``thread_token_usage``."""
    payload = payload_of(record)
    if isinstance(payload, TokenUsageRecord):
        return payload.thread_token_usage
    if isinstance(payload, EventMsg) and isinstance(payload.info, TokenUsageInfo):
        return payload.info.total_token_usage
    return None


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
        if record.type != "token_usage_record" and (
            record.type != "event_msg" or payload_type(record) != "token_count"
        ):
            continue
        total = _total(record)
        if total is None:
            continue
        spent = tokens_spent(counted, total)
        counted = total
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
"""Codex's rollout records (codex-acp 0.16.0, Codex 0.137.0; codex-acp 2.6.0, Codex 0.166.0)."""


class CodexConversation(JsonlConversation[Record], frozen=True, kw_only=True):
    """A Codex rollout file: its records in order, and the lines skipped."""

    format = CODEX


def load_codex_session(path: str | os.PathLike[str]) -> CodexConversation:
    """Load a Codex rollout file (`load_jsonl`)."""
    return load_jsonl(path, CodexConversation)


def read_codex_info(path: str | os.PathLike[str], *, project: str | None = None) -> SessionInfo:
    """Summarize a Codex rollout file for listing (``project``: else its ``cwd``)."""
    return read_jsonl_info(path, CodexConversation, project=project)
